//! An administrator's circuit controls: release a circuit now, or make it
//! probe now. The rule is the pure [`circuits::operate`]; this shell
//! commits the circuit, its event and the audit entry together (fenced by
//! the circuit's version, like every circuit write), then moves the
//! circuit's waiters as a probe's outcome would: a few at a time, so a
//! release never stampedes the resource.

use super::error::RouteError;
use super::Routes;
use crate::circuits::{self, row, view, CircuitKey, Operation};
use crate::store::{AuditRow, StoreError};
use domain::audit::{Actor, AuditAction};
use domain::circuit::CircuitView;

/// Why a circuit control did not apply.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    #[error("no circuit {0}")]
    NotFound(String),
    /// Closed: nothing to release or probe.
    #[error("{0}")]
    Closed(String),
    /// A route's change moved the circuit between reading and writing it.
    #[error("the circuit {0} changed meanwhile; nothing was changed")]
    Moved(String),
    #[error(transparent)]
    Route(#[from] RouteError),
}

impl From<StoreError> for ControlError {
    fn from(e: StoreError) -> Self {
        ControlError::Route(RouteError::Store(e))
    }
}

impl Routes {
    /// Applies `op` to the circuit `key` as the current request's actor
    /// and answers the circuit after it, with the routes still waiting.
    pub async fn control_circuit(
        &self,
        key: &CircuitKey,
        op: Operation,
    ) -> Result<CircuitView, ControlError> {
        let loaded = self.circuits().await?;
        let (Some(before), Some(version)) = (loaded.set.get(key), loaded.version(key)) else {
            return Err(ControlError::NotFound(key.to_string()));
        };
        let now = self.now();
        let after = circuits::operate(before, op, now).map_err(ControlError::Closed)?;
        let actor = crate::audit::current().unwrap_or_else(Actor::timer);
        let waiting = self.store.circuit_waiters(&key.to_string()).await?.len();
        let was = view::view(before, waiting as i64);
        let audit = AuditRow {
            id: 0,
            at_ms: now.timestamp_millis(),
            actor: crate::audit::actor_json(&actor),
            action: match op {
                Operation::Release => AuditAction::CircuitReleased,
                Operation::Probe => AuditAction::CircuitProbed,
            }
            .as_str()
            .to_string(),
            subject: key.to_string(),
            detail: Some(
                serde_json::json!({
                    "state": was.state, "until": was.until, "probe_holder": was.probe_holder,
                    "code": was.code, "openings": was.openings, "routes_waiting": waiting,
                })
                .to_string(),
            ),
        };
        let write = row::operator_write(&after, version, op, &actor);
        match self.store.operate_circuit(&write, &audit).await {
            Err(StoreError::StaleCircuit { .. }) => {
                return Err(ControlError::Moved(key.to_string()))
            }
            other => other?,
        }
        // Committed: the waiters follow. A failure only delays them (each
        // looks at the circuit again at its old deadline), so it is logged.
        self.revisit_all(std::slice::from_ref(key)).await;
        let still = self
            .store
            .circuit_waiting_counts()
            .await?
            .into_iter()
            .find(|(k, _)| *k == key.to_string())
            .map_or(0, |(_, n)| n);
        Ok(view::view(&after, still))
    }
}
