//! Circuits to and from stored rows, and a [`CircuitSet`]'s changes as the
//! fenced writes a route commit carries. Stored rows are parsed here, once:
//! one that does not parse is corrupt and answers an error, never a default.

use super::set::{CircuitChange, CircuitSet};
use super::{Circuit, CircuitKey, CircuitState, Operation};
use crate::clock::from_ms;
use crate::store::{CircuitRow, CircuitWrite};
use domain::circuit::CircuitStatus;
use std::collections::BTreeMap;

/// The circuits as loaded, with the version each was read at.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    pub set: CircuitSet,
    versions: BTreeMap<CircuitKey, i64>,
}

impl Loaded {
    pub fn from_rows(rows: Vec<CircuitRow>) -> Result<Loaded, String> {
        let mut versions = BTreeMap::new();
        let mut circuits = Vec::with_capacity(rows.len());
        for r in rows {
            let c = from_row(&r)?;
            versions.insert(c.key.clone(), r.version);
            circuits.push(c);
        }
        Ok(Loaded {
            set: CircuitSet::new(circuits),
            versions,
        })
    }

    /// The version `key` was read at (`None`: no such circuit).
    pub fn version(&self, key: &CircuitKey) -> Option<i64> {
        self.versions.get(key).copied()
    }

    /// The set's changes as writes fenced by the versions read, each with
    /// its event naming `route_id`.
    pub fn writes(&self, route_id: &str) -> Vec<CircuitWrite> {
        self.set
            .changes()
            .into_iter()
            .map(|change| {
                let expected = self.versions.get(&change.after.key).copied();
                write(&change, expected, route_id)
            })
            .collect()
    }
}

fn write(change: &CircuitChange, expected: Option<i64>, route_id: &str) -> CircuitWrite {
    let row = to_row(&change.after, expected.map_or(1, |v| v + 1));
    let payload = payload(&row);
    CircuitWrite {
        row,
        expected_version: expected,
        event_kind: format!("circuit.{}", change.kind()),
        route_id: route_id.to_string(),
        event_payload: payload.to_string(),
    }
}

/// The circuit after it, as its event carries it.
fn payload(row: &CircuitRow) -> serde_json::Value {
    serde_json::json!({
        "scope": row.scope, "resource": row.resource, "state": row.state,
        "open_until": row.open_until, "probe_holder": row.probe_holder,
        "probe_until": row.probe_until, "openings": row.openings, "code": row.code,
        "released": row.released,
    })
}

/// The event kind of an administrator's change: a release closes the
/// circuit (`circuit.closed`, as a successful probe does, so webhooks
/// subscribed to closings hear of it); probing now is
/// `circuit.probe_requested`.
pub fn operation_event(op: Operation) -> &'static str {
    match op {
        Operation::Release => "circuit.closed",
        Operation::Probe => "circuit.probe_requested",
    }
}

/// An administrator's change to a circuit read at `version`, fenced by
/// it. Its event names no route (`route_id` is empty) but the actor.
pub fn operator_write(
    after: &Circuit,
    version: i64,
    op: Operation,
    actor: &domain::audit::Actor,
) -> CircuitWrite {
    let row = to_row(after, version + 1);
    let mut payload = payload(&row);
    payload["actor"] = serde_json::to_value(actor).expect("actors serialise");
    payload["operation"] = serde_json::json!(op.to_string());
    CircuitWrite {
        row,
        expected_version: Some(version),
        event_kind: operation_event(op).to_string(),
        route_id: String::new(),
        event_payload: payload.to_string(),
    }
}

pub fn status(c: &Circuit) -> CircuitStatus {
    match c.state {
        CircuitState::Closed => CircuitStatus::Closed,
        CircuitState::Open { .. } => CircuitStatus::Open,
        CircuitState::Probing { .. } => CircuitStatus::Probing,
    }
}

pub fn to_row(c: &Circuit, version: i64) -> CircuitRow {
    let (open_until, probe_holder, probe_until) = match &c.state {
        CircuitState::Closed => (None, None, None),
        CircuitState::Open { until } => (Some(until.timestamp_millis()), None, None),
        CircuitState::Probing {
            holder,
            lease_until,
        } => (
            None,
            Some(holder.clone()),
            Some(lease_until.timestamp_millis()),
        ),
    };
    CircuitRow {
        scope: c.key.scope.as_str().to_string(),
        resource: c.key.resource.clone(),
        state: status(c).to_string(),
        open_until,
        probe_holder,
        probe_until,
        owner: c.owner.clone(),
        openings: i64::from(c.openings),
        code: c.code.clone(),
        changed_at: c.changed_at.timestamp_millis(),
        version,
        released: i64::from(c.released),
    }
}

pub fn from_row(r: &CircuitRow) -> Result<Circuit, String> {
    let name = format!("{}:{}", r.scope, r.resource);
    let corrupt = |what: &str| format!("stored circuit {name} is corrupt: {what}");
    let key: CircuitKey = name.parse().map_err(|e: String| corrupt(&e))?;
    let status: CircuitStatus = r.state.parse().map_err(|_| corrupt("unknown state"))?;
    let state = match status {
        CircuitStatus::Closed => CircuitState::Closed,
        CircuitStatus::Open => CircuitState::Open {
            until: from_ms(
                r.open_until
                    .ok_or_else(|| corrupt("open without a deadline"))?,
            ),
        },
        CircuitStatus::Probing => CircuitState::Probing {
            holder: r
                .probe_holder
                .clone()
                .ok_or_else(|| corrupt("probing without a holder"))?,
            lease_until: from_ms(
                r.probe_until
                    .ok_or_else(|| corrupt("probing without a lease"))?,
            ),
        },
    };
    Ok(Circuit {
        key,
        state,
        openings: u32::try_from(r.openings).map_err(|_| corrupt("openings out of range"))?,
        code: r.code.clone(),
        owner: r.owner.clone(),
        changed_at: from_ms(r.changed_at),
        released: u32::try_from(r.released).map_err(|_| corrupt("released out of range"))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuits::CircuitScope;
    use chrono::DateTime;

    #[test]
    fn every_state_survives_a_round_trip_and_corrupt_rows_are_errors() {
        let t = |s: i64| DateTime::from_timestamp(1_796_040_000 + s, 0).expect("time");
        let key = CircuitKey {
            scope: CircuitScope::Model,
            resource: "anthropic/claude-sonnet-4-5".into(),
        };
        for state in [
            CircuitState::Closed,
            CircuitState::Open { until: t(60) },
            CircuitState::Probing {
                holder: "r_1".into(),
                lease_until: t(600),
            },
        ] {
            let c = Circuit {
                key: key.clone(),
                state,
                openings: 3,
                code: "model_capacity".into(),
                owner: Some("r_0".into()),
                changed_at: t(1),
                released: 2,
            };
            assert_eq!(from_row(&to_row(&c, 4)), Ok(c));
        }
        let mut bad = to_row(
            &Circuit {
                key,
                state: CircuitState::Open { until: t(60) },
                openings: 1,
                code: "x".into(),
                owner: None,
                changed_at: t(0),
                released: 0,
            },
            1,
        );
        bad.open_until = None;
        assert!(from_row(&bad).is_err());
        bad.state = "melted".into();
        assert!(from_row(&bad).is_err());
    }
}
