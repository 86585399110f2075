//! Who acts: the actor of a request, carried to the route events and audit
//! entries it causes, and the audit service over the store
//! ([`crate::store::AuditStore`]).
//!
//! The request's actor travels as a task-local ([`acting`]) set by the
//! HTTP guard once it admitted a principal, rather than as an argument
//! through every route operation: the operations stay what they are, and
//! whatever they commit in the request's task is attributed to who sent
//! it. What the server does on its own (timers, lease and dispatch
//! timeouts, the scheduler's tasks) runs outside any request and is the
//! timer's.

use crate::auth::rules::{Principal, Via};
use crate::clock::SharedClock;
use crate::store::{AuditRow, DynStore, StoreError};
use domain::audit::{Actor, ActorKind, AuditAction, AuditEntry};
use domain::route::EventKind;
use std::future::Future;

tokio::task_local! {
    static ACTING: Actor;
}

/// Runs `work` as done by `actor`.
pub async fn acting<F: Future>(actor: Actor, work: F) -> F::Output {
    ACTING.scope(actor, work).await
}

/// Who the current task acts for; `None` outside any request.
pub fn current() -> Option<Actor> {
    ACTING.try_with(Clone::clone).ok()
}

/// The actor a principal acts as: a person, a token, or anyone (`--no-auth`).
pub fn actor_of(principal: &Principal) -> Actor {
    let kind = match principal.via {
        Via::Token => ActorKind::Token,
        Via::Session { .. } => ActorKind::Person,
        Via::NoAuth => ActorKind::Local,
    };
    Actor::named(kind, &principal.id, &principal.name)
}

/// An operator on the server's host: the operating-system user, as the
/// command line's audit entries name them.
pub fn command_line() -> Actor {
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .unwrap_or_else(|_| "unknown".into());
    Actor::named(ActorKind::CommandLine, &user, &user)
}

/// Who caused an event of `kind`, `acting` being the request's actor if
/// any. Firings, held waits and the timeouts are the timer's whoever's
/// request happened to run them; what a caller reports (an opening,
/// evidence, an acknowledgement) is the caller's, named by its token or
/// person; a manual action is the person's or token's who acted.
pub fn event_actor(kind: EventKind, acting: Option<Actor>) -> Actor {
    let timer = matches!(
        kind,
        EventKind::Fired | EventKind::Held | EventKind::Ambiguous | EventKind::Unclaimed
    );
    match acting {
        Some(actor) if !timer => {
            // A manual action or a route's end names who did it as is
            // (a person, a token); a report is its caller's.
            if matches!(
                kind,
                EventKind::Action | EventKind::Completed | EventKind::Cancelled
            ) {
                actor
            } else {
                Actor {
                    kind: ActorKind::Caller,
                    ..actor
                }
            }
        }
        _ => Actor::timer(),
    }
}

/// The audit trail: records entries and reads them back.
#[derive(Clone)]
pub struct Audit {
    store: DynStore,
    clock: SharedClock,
}

impl Audit {
    pub fn new(store: DynStore, clock: SharedClock) -> Audit {
        Audit { store, clock }
    }

    /// Records that the current request's actor (the timer outside one)
    /// did `action` to `subject`.
    pub async fn record(
        &self,
        action: AuditAction,
        subject: &str,
        detail: Option<serde_json::Value>,
    ) -> Result<(), StoreError> {
        let actor = current().unwrap_or_else(Actor::timer);
        self.record_as(&actor, action, subject, detail).await
    }

    /// Records that `actor` did `action` to `subject`.
    pub async fn record_as(
        &self,
        actor: &Actor,
        action: AuditAction,
        subject: &str,
        detail: Option<serde_json::Value>,
    ) -> Result<(), StoreError> {
        let row = row(self.clock.now_ms(), actor, action, subject, detail);
        self.store.record_audit(&row).await
    }

    /// Entries after `after` (oldest first), at most `limit`, optionally
    /// about one subject.
    pub async fn entries(
        &self,
        after: i64,
        subject: Option<&str>,
        limit: i64,
    ) -> Result<Vec<AuditEntry>, StoreError> {
        let rows = self.store.audit_after(after, subject, limit).await?;
        rows.into_iter().map(entry_of).collect()
    }
}

/// The entry that `actor` did `action` to `subject` at `at_ms`, for the
/// store to write: on its own ([`Audit::record_as`]) or in the
/// transaction of the change it records (a route action's `Commit`).
pub fn row(
    at_ms: i64,
    actor: &Actor,
    action: AuditAction,
    subject: &str,
    detail: Option<serde_json::Value>,
) -> AuditRow {
    AuditRow {
        id: 0,
        at_ms,
        actor: actor_json(actor),
        action: action.as_str().to_string(),
        subject: subject.to_string(),
        detail: detail.map(|d| d.to_string()),
    }
}

/// An actor as stored (JSON).
pub fn actor_json(actor: &Actor) -> String {
    serde_json::to_string(actor).expect("actors serialise")
}

/// A stored actor read back; a row that does not read is corrupt.
pub fn actor_of_json(text: &str) -> Result<Actor, StoreError> {
    serde_json::from_str(text)
        .map_err(|e| StoreError::Unavailable(format!("a stored actor does not read: {e}")))
}

fn entry_of(row: AuditRow) -> Result<AuditEntry, StoreError> {
    let corrupt = |what: &str| StoreError::Unavailable(format!("audit entry {}: {what}", row.id));
    Ok(AuditEntry {
        id: row.id,
        at: chrono::DateTime::from_timestamp_millis(row.at_ms)
            .ok_or_else(|| corrupt("time out of range"))?,
        actor: actor_of_json(&row.actor)?,
        action: AuditAction::parse(&row.action).ok_or_else(|| corrupt("unknown action"))?,
        subject: row.subject.clone(),
        detail: match &row.detail {
            Some(d) => Some(serde_json::from_str(d).map_err(|_| corrupt("detail is not JSON"))?),
            None => None,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timer_events_are_the_timers_and_reports_the_callers() {
        let alice = Actor::named(ActorKind::Person, "u1", "alice");
        assert_eq!(
            event_actor(EventKind::Fired, Some(alice.clone())),
            Actor::timer()
        );
        assert_eq!(event_actor(EventKind::Action, None), Actor::timer());
        assert_eq!(event_actor(EventKind::Action, Some(alice.clone())), alice);
        let caller = event_actor(EventKind::Failure, Some(alice));
        assert_eq!(caller.kind, ActorKind::Caller);
        assert_eq!(caller.name.as_deref(), Some("alice"));
    }

    #[tokio::test]
    async fn the_acting_actor_is_seen_inside_its_scope_only() {
        assert_eq!(current(), None);
        let bob = Actor::named(ActorKind::Token, "t1", "bob");
        let seen = acting(bob.clone(), async { current() }).await;
        assert_eq!(seen, Some(bob));
        assert_eq!(current(), None);
    }
}
