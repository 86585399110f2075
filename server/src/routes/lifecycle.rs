//! A route's end: the caller's session is over (`complete`) or the route
//! is given up (`cancel`). Fenced by the generation the caller saw, like
//! every transition; the route's armed schedules and open dispatches are
//! voided in the same transaction, so nothing fires or is claimed for an
//! ended route, and its audit entry (`route.action`) is written there too.

use super::error::{Result, RouteError};
use super::machine::{self, Trigger};
use super::model::Route;
use super::Routes;
use crate::store::Commit;
use chrono::{DateTime, Utc};
use domain::api::EndRequest;
use domain::ids::RouteId;
use domain::route::{EventKind, RouteSnapshot, RouteState};

/// How a route ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The caller's session is over: `completed`.
    Complete,
    /// The route is given up: `cancelled`.
    Cancel,
}

impl End {
    fn trigger(self) -> Trigger {
        match self {
            End::Complete => Trigger::Complete,
            End::Cancel => Trigger::CancelRoute,
        }
    }

    fn state(self) -> RouteState {
        match self {
            End::Complete => RouteState::Completed,
            End::Cancel => RouteState::Cancelled,
        }
    }

    fn event(self) -> EventKind {
        match self {
            End::Complete => EventKind::Completed,
            End::Cancel => EventKind::Cancelled,
        }
    }

    /// The request's name: `complete` or `cancel`.
    pub fn verb(self) -> &'static str {
        match self {
            End::Complete => "complete",
            End::Cancel => "cancel",
        }
    }
}

/// The ended route: the next generation, nothing pending, no stop reason
/// (the state says it all). The commit is empty beyond the route: the
/// service voids what was outstanding (see [`Routes::apply`]).
pub fn end(route: &Route, how: End, now: DateTime<Utc>) -> (Route, Commit) {
    let mut next = route.clone();
    next.generation = next.generation.next();
    next.state = how.state();
    next.pending = None;
    next.reason = None;
    next.updated_at = now;
    (next, Commit::default())
}

impl Routes {
    /// Completes or cancels a route, fenced by the expected generation.
    /// Ending a route the same way again answers it as it is (a caller
    /// that lost the answer may repeat the request); ending it the other
    /// way, or a stale generation, answers 409.
    pub async fn end(&self, id: &RouteId, how: End, req: EndRequest) -> Result<RouteSnapshot> {
        let route = self.load(id).await?;
        let now = self.now();
        let action = serde_json::json!(how.verb());
        if route.state == how.state() {
            return self
                .unchanged(&route, action, req.expected_generation)
                .await;
        }
        if req.expected_generation != route.generation {
            return Err(RouteError::Stale(Box::new(route.snapshot(now))));
        }
        if machine::next(route.state, how.trigger()) != Some(how.state()) {
            return Err(self.invalid(&format!("{} is not possible", how.verb()), &route));
        }
        let (next, mut commit) = end(&route, how, now);
        commit.audit = Some(self.action_audit(&next, action, req.expected_generation));
        self.apply_fenced(&route, next, commit, how.event()).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::ids::ProfileId;
    use domain::policy::CandidatePolicy;
    use domain::profile::Candidate;
    use domain::route::{Caller, CallerKind};

    fn route() -> Route {
        let candidate = Candidate {
            id: "c1".into(),
            label: "Claude".into(),
            agent: "claude-code".into(),
            provider_id: String::new(),
            model_id: String::new(),
            profile_ref: String::new(),
            account_ref: None,
            policy: CandidatePolicy::default(),
        };
        let caller = Caller {
            kind: CallerKind::Kanban,
            reference: "card-1".into(),
        };
        Route::open(
            ProfileId::from("p".to_string()),
            caller,
            &candidate,
            Utc::now(),
        )
    }

    #[test]
    fn an_end_moves_the_generation_and_clears_what_was_pending() {
        let r = route();
        for (how, state) in [
            (End::Complete, RouteState::Completed),
            (End::Cancel, RouteState::Cancelled),
        ] {
            let (next, commit) = end(&r, how, Utc::now());
            assert_eq!(next.state, state);
            assert_eq!(next.generation, r.generation.next());
            assert!(next.pending.is_none() && next.reason.is_none());
            assert!(commit.schedule.is_none() && commit.dispatch.is_none());
            assert_eq!(next.invocation_id, r.invocation_id);
        }
    }
}
