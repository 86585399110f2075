//! Circuits as `GET /api/v1/circuits` lists them: state, scope, the
//! resource in words, until when, who probes, and how many routes wait.

use super::row::{from_row, status};
use super::{Circuit, CircuitState};
use crate::store::CircuitRow;
use chrono::{DateTime, Utc};
use domain::circuit::{CircuitList, CircuitView};
use domain::words::circuit_label;
use std::collections::BTreeMap;

pub fn view(c: &Circuit, routes_waiting: i64) -> CircuitView {
    let (until, probe_holder, probe_until) = match &c.state {
        CircuitState::Closed => (None, None, None),
        CircuitState::Open { until } => (Some(*until), None, None),
        CircuitState::Probing {
            holder,
            lease_until,
        } => (None, Some(holder.clone()), Some(*lease_until)),
    };
    CircuitView {
        scope: c.key.scope,
        resource: c.key.resource.clone(),
        label: circuit_label(c.key.scope, &c.key.resource),
        state: status(c),
        until,
        probe_holder,
        probe_until,
        routes_waiting,
        code: c.code.clone(),
        openings: c.openings,
        changed_at: c.changed_at,
    }
}

/// The list from stored rows and the waiting counts by circuit key; not
/// closed ones first, then by key.
pub fn list(
    rows: &[CircuitRow],
    waiting: &[(String, i64)],
    now: DateTime<Utc>,
) -> Result<CircuitList, String> {
    let waiting: BTreeMap<&str, i64> = waiting.iter().map(|(k, n)| (k.as_str(), *n)).collect();
    let mut circuits = rows
        .iter()
        .map(|r| {
            let c = from_row(r)?;
            let n = waiting
                .get(c.key.to_string().as_str())
                .copied()
                .unwrap_or(0);
            Ok(view(&c, n))
        })
        .collect::<Result<Vec<_>, String>>()?;
    circuits.sort_by_key(|c| {
        (
            c.state == domain::circuit::CircuitStatus::Closed,
            c.scope,
            c.resource.clone(),
        )
    });
    Ok(CircuitList {
        circuits,
        server_time: now,
    })
}
