//! The circuits one route change looks at, and what it does to them: a
//! pure working copy. The shell loads it before planning; the planner asks
//! it for holds and tells it about failures, successes and dispatches; the
//! shell commits [`CircuitSet::changes`] in the route change's transaction.

use super::{
    claim_probe, hold, on_failure, pace_return, probe_failed, probe_succeeded, Circuit, CircuitKey,
    CircuitState, FailureFacts, Hold, Pace, Resource,
};
use chrono::{DateTime, Utc};
use classify::{Confidence, Scope};
use domain::policy::ErrorClass;
use std::collections::BTreeMap;

/// One circuit change: the circuit before (`None`: never stored) and after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CircuitChange {
    pub before: Option<Circuit>,
    pub after: Circuit,
}

/// What a circuit change was, as its event names it (`circuit.opened`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::Display, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum ChangeKind {
    Opened,
    Extended,
    /// Its probe failed: open again.
    Reopened,
    ProbeClaimed,
    Closed,
    /// Closed still: one more route returned to its resource (failback).
    Released,
}

impl CircuitChange {
    /// The event's kind, from what changed.
    pub fn kind(&self) -> ChangeKind {
        use CircuitState::*;
        match (self.before.as_ref().map(|c| &c.state), &self.after.state) {
            (None | Some(Closed), Open { .. }) => ChangeKind::Opened,
            (Some(Open { .. }), Open { .. }) => ChangeKind::Extended,
            (Some(Probing { .. }), Open { .. }) => ChangeKind::Reopened,
            (_, Probing { .. }) => ChangeKind::ProbeClaimed,
            (Some(Closed), Closed) => ChangeKind::Released,
            (_, Closed) => ChangeKind::Closed,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct CircuitSet {
    circuits: BTreeMap<CircuitKey, Circuit>,
    /// The stored circuit before the first change, per changed key.
    before: BTreeMap<CircuitKey, Option<Circuit>>,
}

impl CircuitSet {
    pub fn new(circuits: impl IntoIterator<Item = Circuit>) -> CircuitSet {
        CircuitSet {
            circuits: circuits.into_iter().map(|c| (c.key.clone(), c)).collect(),
            before: BTreeMap::new(),
        }
    }

    /// No circuit at all: nothing can hold any candidate.
    pub fn is_empty(&self) -> bool {
        self.circuits.is_empty()
    }

    pub fn get(&self, key: &CircuitKey) -> Option<&Circuit> {
        self.circuits.get(key)
    }

    fn put(&mut self, c: Circuit) {
        let old = self.circuits.get(&c.key).cloned();
        self.before.entry(c.key.clone()).or_insert(old);
        self.circuits.insert(c.key.clone(), c);
    }

    /// What the circuits of the candidate on `r` allow `route` now.
    pub fn hold(&self, r: Resource<'_>, route: &str, now: DateTime<Utc>) -> Hold {
        let keys = CircuitKey::all_for(r);
        hold(keys.iter().filter_map(|k| self.circuits.get(k)), route, now)
    }

    /// `route` is about to dispatch an attempt to the candidate on `r`:
    /// answers false when the candidate is held; otherwise takes the probe
    /// of every expired circuit the candidate is on.
    pub fn dispatch(&mut self, r: Resource<'_>, route: &str, now: DateTime<Utc>) -> bool {
        let Hold::Free { probes } = self.hold(r, route, now) else {
            return false;
        };
        for key in probes {
            if let Some(c) = self.get(&key).and_then(|c| claim_probe(c, route, now)) {
                self.put(c);
            }
        }
        true
    }

    /// A failure of `route`'s attempt on the candidate on `r`: the circuit
    /// the failure's scope names opens, extends, or (probing) reopens;
    /// other probes the route held on this candidate learn nothing about
    /// their resource and are released.
    pub fn fail(
        &mut self,
        r: Resource<'_>,
        scope: Option<Scope>,
        code: &str,
        facts: &FailureFacts,
        route: &str,
        now: DateTime<Utc>,
    ) {
        let named = CircuitKey::for_failure(scope, r);
        if let Some(key) = &named {
            if let Some(c) = on_failure(self.get(key), key.clone(), code, facts, route, now) {
                self.put(c);
            }
        }
        let unjudged = FailureFacts {
            class: ErrorClass::NotProvider,
            confidence: Confidence::Low,
            reset_at: None,
        };
        for key in CircuitKey::all_for(r) {
            if Some(&key) == named.as_ref() {
                continue;
            }
            if let Some(c) = self
                .get(&key)
                .and_then(|c| probe_failed(c, route, code, &unjudged, now))
            {
                self.put(c);
            }
        }
    }

    /// `route`'s attempt on the candidate on `r` succeeded: every probe it
    /// held closes its circuit. Answers the circuits closed.
    pub fn succeed(&mut self, r: Resource<'_>, route: &str, now: DateTime<Utc>) -> Vec<CircuitKey> {
        let mut closed = Vec::new();
        for key in CircuitKey::all_for(r) {
            if let Some(c) = self.get(&key).and_then(|c| probe_succeeded(c, route, now)) {
                closed.push(key);
                self.put(c);
            }
        }
        closed
    }

    /// Failback: `route` asks to return to the candidate on `r` at its
    /// next invocation. It may when none of the candidate's circuits holds
    /// it back as they hold anyone back (an owner's own exception is for
    /// its policy's retries, not for returning early) and no circuit that
    /// closed lately is pacing returns ([`pace_return`]). Then the return
    /// takes the probes of expired circuits and is counted by the closed
    /// ones; answers what had held the candidate back (its code and when
    /// it ended), if anything did. `None`: the route stays where it is.
    pub fn take_return(
        &mut self,
        r: Resource<'_>,
        route: &str,
        now: DateTime<Utc>,
    ) -> Option<Option<(String, DateTime<Utc>)>> {
        let keys = CircuitKey::all_for(r);
        let Hold::Free { probes } = hold(keys.iter().filter_map(|k| self.get(k)), "", now) else {
            return None;
        };
        let mut paced = Vec::new();
        let mut cause: Option<(String, DateTime<Utc>)> = None;
        let mut note = |code: &str, at: DateTime<Utc>| {
            if cause.as_ref().is_none_or(|(_, t)| at > *t) {
                cause = Some((code.to_string(), at));
            }
        };
        for key in &keys {
            let Some(c) = self.get(key) else { continue };
            match pace_return(c, now) {
                Pace::NotYet => return None,
                Pace::Go(counted) => {
                    note(&c.code, c.changed_at);
                    paced.push(counted);
                }
                Pace::Free => {}
            }
        }
        for key in probes {
            let Some(c) = self.get(&key) else { continue };
            let ended = match c.state {
                CircuitState::Open { until } => until,
                _ => now,
            };
            note(&c.code, ended);
            if let Some(claimed) = claim_probe(c, route, now) {
                self.put(claimed);
            }
        }
        for c in paced {
            self.put(c);
        }
        Some(cause)
    }

    /// What changed, in key order.
    pub fn changes(&self) -> Vec<CircuitChange> {
        self.before
            .iter()
            .filter_map(|(key, before)| {
                let after = self.circuits.get(key)?;
                (before.as_ref() != Some(after)).then(|| CircuitChange {
                    before: before.clone(),
                    after: after.clone(),
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuits::{CircuitScope, PROBE_LEASE_SECONDS};

    fn t(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_796_040_000 + s, 0).expect("time")
    }

    fn claude() -> Resource<'static> {
        Resource {
            provider_id: "anthropic",
            model_id: "claude-sonnet-4-5",
            account_ref: Some("team-a"),
            profile_ref: "claude",
        }
    }

    fn quota(reset: i64) -> FailureFacts {
        FailureFacts {
            class: ErrorClass::Hard,
            confidence: Confidence::High,
            reset_at: Some(t(reset)),
        }
    }

    fn account() -> CircuitKey {
        CircuitKey {
            scope: CircuitScope::Account,
            resource: "anthropic/team-a".into(),
        }
    }

    #[test]
    fn a_failure_opens_its_scope_and_holds_everyone_but_the_owner() {
        let mut set = CircuitSet::new([]);
        set.fail(
            claude(),
            Some(Scope::Account),
            "quota_limited",
            &quota(900),
            "r1",
            t(0),
        );
        let changes = set.changes();
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].kind(), ChangeKind::Opened);
        assert_eq!(changes[0].after.key, account());
        assert_eq!(set.hold(claude(), "r2", t(1)).until(), Some(t(900)));
        assert!(set.hold(claude(), "r1", t(1)).is_free());
        // Another candidate on a different account is not held.
        let other = Resource {
            account_ref: Some("team-b"),
            ..claude()
        };
        assert!(set.hold(other, "r2", t(1)).is_free());
        // Request-scoped or unknown-scope failures name no resource.
        let mut none = CircuitSet::new([]);
        none.fail(claude(), Some(Scope::Request), "x", &quota(9), "r1", t(0));
        none.fail(claude(), None, "x", &quota(9), "r1", t(0));
        assert!(none.changes().is_empty());
    }

    #[test]
    fn dispatch_takes_the_probe_once_and_outcomes_close_or_reopen() {
        let mut set = CircuitSet::new([]);
        set.fail(
            claude(),
            Some(Scope::Account),
            "quota_limited",
            &quota(60),
            "r1",
            t(0),
        );
        let stored: Vec<Circuit> = set.changes().into_iter().map(|c| c.after).collect();
        let mut a = CircuitSet::new(stored.clone());
        assert!(!a.dispatch(claude(), "r2", t(30)), "held before expiry");
        assert!(a.dispatch(claude(), "r2", t(60)), "expired: r2 probes");
        assert_eq!(a.changes()[0].kind(), ChangeKind::ProbeClaimed);
        let probing: Vec<Circuit> = a.changes().into_iter().map(|c| c.after).collect();
        let mut b = CircuitSet::new(probing.clone());
        assert!(!b.dispatch(claude(), "r3", t(61)), "one probe at a time");
        assert_eq!(
            b.hold(claude(), "r3", t(61)),
            Hold::Held {
                key: account(),
                until: t(60 + PROBE_LEASE_SECONDS),
                awaiting_probe: true
            }
        );
        let mut ok = CircuitSet::new(probing.clone());
        assert_eq!(ok.succeed(claude(), "r2", t(70)), vec![account()]);
        assert_eq!(ok.changes()[0].kind(), ChangeKind::Closed);
        assert!(ok.hold(claude(), "r3", t(70)).is_free());
        let mut bad = CircuitSet::new(probing);
        bad.fail(
            claude(),
            Some(Scope::Account),
            "quota_limited",
            &quota(500),
            "r2",
            t(70),
        );
        assert_eq!(bad.changes()[0].kind(), ChangeKind::Reopened);
        assert_eq!(bad.hold(claude(), "r3", t(71)).until(), Some(t(500)));
        // A route that is not the holder succeeding closes nothing.
        let mut other = CircuitSet::new(stored);
        assert!(other.succeed(claude(), "r9", t(70)).is_empty());
    }
}
