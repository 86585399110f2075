//! A person's manual actions on a route (retry now, skip now, cancel,
//! stop), fenced by the generation the person saw. Each is audited
//! (`route.action`) in its transition's own transaction.

use super::error::{Result, RouteError};
use super::machine;
use super::model::Route;
use super::plan;
use super::Routes;
use crate::store::AuditRow;
use domain::api::ActionRequest;
use domain::audit::{Actor, AuditAction};
use domain::ids::{Generation, RouteId};
use domain::route::{Action, EventKind, RouteSnapshot, RouteState};

impl Routes {
    /// Retry now, skip now, cancel or stop, fenced by the expected generation.
    pub async fn act(&self, id: &RouteId, req: ActionRequest) -> Result<RouteSnapshot> {
        let route = self.load(id).await?;
        let now = self.now();
        let action = serde_json::json!(req.action);
        // Cancelling or stopping a stopped route changes nothing: answer
        // with the route as it is, whatever generation was sent.
        if matches!(req.action, Action::Cancel | Action::Stop)
            && route.state == RouteState::ActionRequired
        {
            return self
                .unchanged(&route, action, req.expected_generation)
                .await;
        }
        if req.expected_generation != route.generation {
            return Err(RouteError::Stale(Box::new(route.snapshot(now))));
        }
        let Some(state) = machine::next(route.state, req.action.trigger()) else {
            return Err(self.invalid(
                &format!("{:?} is not possible", req.action).to_lowercase(),
                &route,
            ));
        };
        let profile = if plan::action_needs_profile(&route, req.action) {
            Some(self.profiles.get_usable(route.profile_id.as_str()).await?)
        } else {
            None
        };
        let mut circuits = self.circuits().await?;
        let (next, mut commit) = plan::action(
            &route,
            req.action,
            state,
            profile.as_ref(),
            &mut circuits.set,
            self.settings.max_hold_wait,
            now,
        )?;
        commit.circuits = circuits.writes(route.id.as_str());
        commit.audit = Some(self.action_audit(&next, action, req.expected_generation));
        self.apply_fenced(&route, next, commit, EventKind::Action)
            .await
    }

    /// The audit entry of a manual action (`action`: `stop`, `complete`,
    /// …) that named `expected` and leaves `after`, by the current
    /// request's actor: committed with the transition, so a route action
    /// and its entry are written together or not at all.
    pub(super) fn action_audit(
        &self,
        after: &Route,
        action: serde_json::Value,
        expected: Generation,
    ) -> AuditRow {
        let actor = crate::audit::current().unwrap_or_else(Actor::timer);
        let detail = serde_json::json!({
            "action": action,
            "expected_generation": expected,
            "generation": after.generation,
        });
        crate::audit::row(
            self.now().timestamp_millis(),
            &actor,
            AuditAction::RouteAction,
            after.id.as_str(),
            Some(detail),
        )
    }

    /// A manual action that changes nothing (stopping a stopped route,
    /// ending an ended one the same way) answers the route as it is. Who
    /// asked is still audited; with no transition to commit it with, the
    /// entry is written on its own.
    pub(super) async fn unchanged(
        &self,
        route: &Route,
        action: serde_json::Value,
        expected: Generation,
    ) -> Result<RouteSnapshot> {
        self.store
            .record_audit(&self.action_audit(route, action, expected))
            .await?;
        Ok(route.snapshot(self.now()))
    }
}
