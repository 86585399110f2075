//! A person's manual actions on a route (retry now, skip now, cancel,
//! stop), fenced by the generation the person saw.

use super::error::{Result, RouteError};
use super::machine;
use super::plan;
use super::Routes;
use domain::api::ActionRequest;
use domain::ids::RouteId;
use domain::route::{Action, EventKind, RouteSnapshot, RouteState};

impl Routes {
    /// Retry now, skip now, cancel or stop, fenced by the expected generation.
    pub async fn act(&self, id: &RouteId, req: ActionRequest) -> Result<RouteSnapshot> {
        let route = self.load(id).await?;
        let now = self.now();
        // Cancelling or stopping a stopped route changes nothing: answer
        // with the route as it is, whatever generation was sent.
        if matches!(req.action, Action::Cancel | Action::Stop)
            && route.state == RouteState::ActionRequired
        {
            return Ok(route.snapshot(now));
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
        self.apply_fenced(&route, next, commit, EventKind::Action)
            .await
    }
}
