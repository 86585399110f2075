//! Shared resource circuits: one provider, account, model or profile that
//! is failing for everyone, so a hundred routes do not hammer it.
//!
//! docs/design.md (“Circuits”): a circuit is an eligibility input, not a
//! second policy; an expired circuit recovers through one exclusive probe,
//! and while one route holds the probe the others keep waiting or move to
//! other candidates, without a stampede.
//!
//! This module is the pure core: which resource a failure names
//! ([`CircuitKey`]), when a failure opens a circuit and for how long
//! ([`open`]), who may probe it ([`claim_probe`]), what a probe's outcome
//! does ([`probe_succeeded`], [`probe_failed`]), and what a route may do
//! with a candidate while its circuit is not closed ([`eligibility`]). No
//! I/O, no clock: a shell persists each [`Circuit`] in the same transaction
//! as the route change that caused it.
//!
//! States: `closed` → (qualifying failure) → `open` until the validated
//! reset, else a cooldown that doubles with each opening in a row, capped →
//! (expired, a route claims the probe) → `probing` → success: `closed`, the
//! waiters released a few at a time; failure: `open` again with the new
//! hint. A probe whose holder never reports is released after its lease.
//!
//! The route whose failure opened a circuit is its *owner*: the candidate's
//! policy paces that route's own response, and the circuit keeps concurrent
//! routes from making a retry herd (docs/design.md, “Circuits”). So the
//! owner's own policy keeps pacing it (its 5, 10, 20 s retries, or its
//! switch to the next candidate), and each of its attempts on the resource
//! is the probe. The circuit exists to hold back everyone else.

pub mod row;
pub mod set;
pub mod view;

use chrono::{DateTime, Duration, Utc};
use classify::{Confidence, Scope};
pub use domain::circuit::CircuitScope;
use domain::policy::ErrorClass;
pub use set::{ChangeKind, CircuitChange, CircuitSet};

/// The first cooldown without a reset hint.
pub const BASE_COOLDOWN_SECONDS: i64 = 30;
/// Cooldowns double per opening in a row, up to this.
pub const MAX_COOLDOWN_SECONDS: i64 = 3_600;
/// A probe's holder must report within this, or another route may probe.
pub const PROBE_LEASE_SECONDS: i64 = 600;
/// After a successful probe, waiting routes go this many at a time…
pub const RELEASE_BATCH: usize = 5;
/// …this far apart.
pub const RELEASE_SPACING_MS: i64 = 1_000;

/// One shared resource: the scope and a stable, non-secret name for it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CircuitKey {
    pub scope: CircuitScope,
    /// `anthropic`, `anthropic/acct-team-a`, `anthropic/claude-sonnet-4-5`,
    /// or the profile reference.
    pub resource: String,
}

/// `provider:anthropic`: how a schedule names the circuit it waits for.
impl std::fmt::Display for CircuitKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.scope, self.resource)
    }
}

impl std::str::FromStr for CircuitKey {
    type Err = String;

    fn from_str(s: &str) -> Result<CircuitKey, String> {
        let (scope, resource) = s
            .split_once(':')
            .ok_or_else(|| format!("circuit key `{s}` has no scope"))?;
        Ok(CircuitKey {
            scope: scope
                .parse()
                .map_err(|_| format!("circuit key `{s}` has an unknown scope"))?,
            resource: resource.to_string(),
        })
    }
}

/// What the key needs to know about the candidate that failed.
#[derive(Debug, Clone, Copy)]
pub struct Resource<'a> {
    pub provider_id: &'a str,
    pub model_id: &'a str,
    /// A non-secret account name the candidate may carry. Without one, two
    /// candidates cannot be proven to share an account.
    pub account_ref: Option<&'a str>,
    pub profile_ref: &'a str,
}

impl<'a> From<&'a domain::profile::Candidate> for Resource<'a> {
    fn from(c: &'a domain::profile::Candidate) -> Resource<'a> {
        Resource {
            provider_id: &c.provider_id,
            model_id: &c.model_id,
            account_ref: c.account_ref.as_deref(),
            profile_ref: &c.profile_ref,
        }
    }
}

impl CircuitKey {
    /// Every circuit a candidate is on: whichever of them is not closed
    /// can hold it back.
    pub fn all_for(r: Resource<'_>) -> Vec<CircuitKey> {
        let scopes = [
            Scope::Provider,
            Scope::Model,
            Scope::Account,
            Scope::Profile,
        ];
        let mut keys: Vec<CircuitKey> = scopes
            .into_iter()
            .filter_map(|s| CircuitKey::for_failure(Some(s), r))
            .collect();
        keys.sort();
        keys.dedup();
        keys
    }

    /// The resource a failure of `scope` names, or `None` (request scope,
    /// unknown scope, or nothing to name the resource by).
    pub fn for_failure(scope: Option<Scope>, r: Resource<'_>) -> Option<CircuitKey> {
        let named = |s: &str| (!s.trim().is_empty()).then(|| s.trim().to_string());
        let (scope, resource) = match scope? {
            Scope::Provider => (CircuitScope::Provider, named(r.provider_id)?),
            Scope::Model => (
                CircuitScope::Model,
                format!("{}/{}", named(r.provider_id)?, named(r.model_id)?),
            ),
            Scope::Account => match r.account_ref.and_then(named) {
                Some(account) => (
                    CircuitScope::Account,
                    format!("{}/{account}", named(r.provider_id)?),
                ),
                // Not provably shared: the candidate's own profile.
                None => (CircuitScope::Profile, named(r.profile_ref)?),
            },
            Scope::Profile => (CircuitScope::Profile, named(r.profile_ref)?),
            Scope::Request => return None,
        };
        Some(CircuitKey { scope, resource })
    }
}

/// Where a circuit is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CircuitState {
    /// Working; nothing is held back.
    Closed,
    /// Failing: candidates on it are ineligible until `until`.
    Open { until: DateTime<Utc> },
    /// Expired, and one route's attempt is the probe.
    Probing {
        holder: String,
        lease_until: DateTime<Utc>,
    },
}

/// A circuit as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Circuit {
    pub key: CircuitKey,
    pub state: CircuitState,
    /// Openings since the last successful probe (drives the cooldown).
    pub openings: u32,
    /// The code that opened it last (`quota_limited`), for people.
    pub code: String,
    /// The route whose failure opened it: its own retries stay paced by
    /// its policy, each one the probe.
    pub owner: Option<String>,
    pub changed_at: DateTime<Utc>,
    /// Closed: routes that returned to the resource since (failback), so
    /// they go back a few at a time ([`release_times`]).
    pub released: u32,
}

/// A failure as the circuit sees it.
#[derive(Debug, Clone, Copy)]
pub struct FailureFacts {
    pub class: ErrorClass,
    pub confidence: Confidence,
    /// A validated reset or retry time, if the classifier found one.
    pub reset_at: Option<DateTime<Utc>>,
}

/// Whether a failure opens a circuit: a recovering class, high confidence.
pub fn qualifies(f: &FailureFacts) -> bool {
    matches!(f.class, ErrorClass::Transient | ErrorClass::Hard) && f.confidence == Confidence::High
}

/// The cooldown after `openings` openings in a row (1 = the first).
pub fn cooldown(openings: u32) -> Duration {
    let doublings = openings.saturating_sub(1).min(16);
    let seconds = BASE_COOLDOWN_SECONDS.saturating_mul(1_i64 << doublings);
    Duration::seconds(seconds.min(MAX_COOLDOWN_SECONDS))
}

/// Opens (or extends) a circuit for a qualifying failure of `route`. A
/// circuit that is already open keeps the later of its deadline and the
/// new one, so a shorter hint never shortens it, and keeps its owner; a
/// probing circuit is left to its probe.
pub fn open(
    existing: Option<&Circuit>,
    key: CircuitKey,
    code: &str,
    failure: &FailureFacts,
    route: &str,
    now: DateTime<Utc>,
) -> Option<Circuit> {
    if !qualifies(failure) {
        return None;
    }
    let openings = match existing.map(|c| &c.state) {
        Some(CircuitState::Probing { .. }) => return None,
        Some(CircuitState::Open { .. }) => existing.map_or(1, |c| c.openings.max(1)),
        Some(CircuitState::Closed) | None => existing.map_or(0, |c| c.openings) + 1,
    };
    let until = deadline(failure.reset_at, openings, now);
    let (until, owner) = match existing.map(|c| (&c.state, &c.owner)) {
        Some((CircuitState::Open { until: old }, owner)) => {
            (until.max(*old), owner.clone().or(Some(route.to_string())))
        }
        _ => (until, Some(route.to_string())),
    };
    Some(Circuit {
        key,
        state: CircuitState::Open { until },
        openings,
        code: code.to_string(),
        owner,
        changed_at: now,
        released: 0,
    })
}

/// A validated future reset, else the cooldown.
fn deadline(reset_at: Option<DateTime<Utc>>, openings: u32, now: DateTime<Utc>) -> DateTime<Utc> {
    match reset_at {
        Some(r) if r > now => r,
        _ => now + cooldown(openings),
    }
}

/// `route` asks to probe: granted when the circuit is open and expired (or
/// the route is its owner), or probing with a lease that ran out. Exactly
/// one holder at a time.
pub fn claim_probe(c: &Circuit, route: &str, now: DateTime<Utc>) -> Option<Circuit> {
    let free = match &c.state {
        CircuitState::Open { until } => now >= *until || c.owner.as_deref() == Some(route),
        CircuitState::Probing { lease_until, .. } => now >= *lease_until,
        CircuitState::Closed => false,
    };
    free.then(|| Circuit {
        state: CircuitState::Probing {
            holder: route.to_string(),
            lease_until: now + Duration::seconds(PROBE_LEASE_SECONDS),
        },
        changed_at: now,
        ..c.clone()
    })
}

/// The probe succeeded: closed, the opening count reset.
pub fn probe_succeeded(c: &Circuit, route: &str, now: DateTime<Utc>) -> Option<Circuit> {
    match &c.state {
        CircuitState::Probing { holder, .. } if holder == route => Some(Circuit {
            state: CircuitState::Closed,
            openings: 0,
            owner: None,
            changed_at: now,
            released: 0,
            ..c.clone()
        }),
        _ => None,
    }
}

/// The probe failed with a qualifying failure: open again, longer (or until
/// the new hint). A failure that does not qualify (the probe's own task
/// failed) releases the probe without judging the resource.
pub fn probe_failed(
    c: &Circuit,
    route: &str,
    code: &str,
    failure: &FailureFacts,
    now: DateTime<Utc>,
) -> Option<Circuit> {
    let CircuitState::Probing { holder, .. } = &c.state else {
        return None;
    };
    if holder != route {
        return None;
    }
    if !qualifies(failure) {
        return Some(Circuit {
            state: CircuitState::Open { until: now },
            owner: None,
            changed_at: now,
            ..c.clone()
        });
    }
    let openings = c.openings + 1;
    Some(Circuit {
        state: CircuitState::Open {
            until: deadline(failure.reset_at, openings, now),
        },
        openings,
        code: code.to_string(),
        // Its owner keeps probing at its own policy's pace.
        owner: Some(route.to_string()),
        changed_at: now,
        released: 0,
        key: c.key.clone(),
    })
}

/// What a failure of `route` on `key` does to that circuit: the probe it
/// holds failed, or the circuit opens or extends. `None`: unchanged.
pub fn on_failure(
    existing: Option<&Circuit>,
    key: CircuitKey,
    code: &str,
    failure: &FailureFacts,
    route: &str,
    now: DateTime<Utc>,
) -> Option<Circuit> {
    match existing {
        Some(c) if matches!(&c.state, CircuitState::Probing { holder, .. } if holder == route) => {
            probe_failed(c, route, code, failure, now)
        }
        _ => open(existing, key, code, failure, route, now),
    }
}

/// What an administrator may do to a circuit by hand, when a failure
/// opened it wrongly or the resource came back before its deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::Display, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum Operation {
    /// Closed now, as if its probe had succeeded: its waiters go, a few
    /// at a time, and the opening count starts again.
    Release,
    /// Expired now: the next route to go is the probe (a probe in flight
    /// is given up, so its holder's outcome no longer decides).
    Probe,
}

/// The circuit after an administrator's `op`, or why it does not apply
/// (a closed circuit has nothing to release or probe).
pub fn operate(c: &Circuit, op: Operation, now: DateTime<Utc>) -> Result<Circuit, String> {
    if c.state == CircuitState::Closed {
        return Err(format!(
            "the circuit {} is closed: nothing holds its routes back, so there is nothing to {}",
            c.key,
            match op {
                Operation::Release => "release",
                Operation::Probe => "probe",
            }
        ));
    }
    Ok(match op {
        Operation::Release => Circuit {
            state: CircuitState::Closed,
            openings: 0,
            owner: None,
            changed_at: now,
            released: 0,
            ..c.clone()
        },
        Operation::Probe => Circuit {
            state: CircuitState::Open { until: now },
            changed_at: now,
            ..c.clone()
        },
    })
}

/// What a route may do with a candidate on this circuit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Eligibility {
    Eligible,
    /// Ineligible until then (open): a retry or wait moves its deadline
    /// there, a switch looks for another candidate.
    BlockedUntil(DateTime<Utc>),
    /// Another route is probing: wait for its outcome (at the latest
    /// until its lease ends).
    AwaitingProbe {
        holder: String,
        lease_until: DateTime<Utc>,
    },
    /// Expired and unclaimed (or the route is its owner): this route may
    /// go, and its attempt is the probe.
    ProbeAvailable,
}

pub fn eligibility(c: Option<&Circuit>, route: &str, now: DateTime<Utc>) -> Eligibility {
    match c.map(|c| &c.state) {
        None | Some(CircuitState::Closed) => Eligibility::Eligible,
        Some(CircuitState::Open { .. }) if c.and_then(|c| c.owner.as_deref()) == Some(route) => {
            Eligibility::ProbeAvailable
        }
        Some(CircuitState::Open { until }) if now < *until => Eligibility::BlockedUntil(*until),
        Some(CircuitState::Open { .. }) => Eligibility::ProbeAvailable,
        Some(CircuitState::Probing { holder, .. }) if holder == route => Eligibility::Eligible,
        Some(CircuitState::Probing { lease_until, .. }) if now >= *lease_until => {
            Eligibility::ProbeAvailable
        }
        Some(CircuitState::Probing {
            holder,
            lease_until,
        }) => Eligibility::AwaitingProbe {
            holder: holder.clone(),
            lease_until: *lease_until,
        },
    }
}

/// What all the circuits a candidate is on allow a route to do with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hold {
    /// Nothing holds it back. `probes`: the expired circuits the route's
    /// next attempt probes (claimed in the transaction that dispatches it).
    Free { probes: Vec<CircuitKey> },
    /// Held until `until` by `key` (the circuit whose deadline is latest);
    /// `awaiting_probe` when that is another route's probe lease.
    Held {
        key: CircuitKey,
        until: DateTime<Utc>,
        awaiting_probe: bool,
    },
}

impl Hold {
    pub fn is_free(&self) -> bool {
        matches!(self, Hold::Free { .. })
    }

    /// When a held candidate may be tried again.
    pub fn until(&self) -> Option<DateTime<Utc>> {
        match self {
            Hold::Free { .. } => None,
            Hold::Held { until, .. } => Some(*until),
        }
    }
}

/// The [`Hold`] of a candidate on `circuits` (those it is on) for `route`.
pub fn hold<'a>(
    circuits: impl IntoIterator<Item = &'a Circuit>,
    route: &str,
    now: DateTime<Utc>,
) -> Hold {
    let mut probes = Vec::new();
    let mut held: Option<(CircuitKey, DateTime<Utc>, bool)> = None;
    for c in circuits {
        let (until, awaiting) = match eligibility(Some(c), route, now) {
            Eligibility::Eligible => continue,
            Eligibility::ProbeAvailable => {
                probes.push(c.key.clone());
                continue;
            }
            Eligibility::BlockedUntil(until) => (until, false),
            Eligibility::AwaitingProbe { lease_until, .. } => (lease_until, true),
        };
        if held.as_ref().is_none_or(|(_, u, _)| until > *u) {
            held = Some((c.key.clone(), until, awaiting));
        }
    }
    match held {
        Some((key, until, awaiting_probe)) => Hold::Held {
            key,
            until,
            awaiting_probe,
        },
        None => Hold::Free { probes },
    }
}

/// How long after a probe closed its circuit the routes that moved off
/// the resource are paced back to it; later, they return freely.
pub const RETURN_WINDOW_SECONDS: i64 = 3_600;

/// What a closed circuit says about one more route returning to its
/// resource (failback).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pace {
    /// Nothing to pace: not closed by a probe lately.
    Free,
    /// This route may go now; the circuit counts it.
    Go(Circuit),
    /// Too many went just now: the route stays where it is for now.
    NotYet,
}

/// Whether one more route may return to a resource whose circuit `c`
/// closed: the `released`-th return goes when [`release_times`] would
/// release that waiter, so returns go a few at a time, as waiters do. A
/// circuit closed longer than [`RETURN_WINDOW_SECONDS`] ago paces nothing.
pub fn pace_return(c: &Circuit, now: DateTime<Utc>) -> Pace {
    if c.state != CircuitState::Closed
        || now - c.changed_at > Duration::seconds(RETURN_WINDOW_SECONDS)
    {
        return Pace::Free;
    }
    let n = c.released as usize;
    let slot =
        c.changed_at + Duration::milliseconds((n / RELEASE_BATCH) as i64 * RELEASE_SPACING_MS);
    if now < slot {
        return Pace::NotYet;
    }
    Pace::Go(Circuit {
        released: c.released + 1,
        ..c.clone()
    })
}

/// When each waiting route goes after a successful probe: a few at a time,
/// in the order they started waiting, so the resource is not stampeded.
pub fn release_times(waiting: usize, now: DateTime<Utc>) -> Vec<DateTime<Utc>> {
    (0..waiting)
        .map(|i| now + Duration::milliseconds((i / RELEASE_BATCH) as i64 * RELEASE_SPACING_MS))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_796_040_000 + s, 0).expect("time")
    }

    fn key() -> CircuitKey {
        CircuitKey {
            scope: CircuitScope::Provider,
            resource: "anthropic".into(),
        }
    }

    fn hard(reset: Option<DateTime<Utc>>) -> FailureFacts {
        FailureFacts {
            class: ErrorClass::Hard,
            confidence: Confidence::High,
            reset_at: reset,
        }
    }

    fn resource<'a>(account: Option<&'a str>) -> Resource<'a> {
        Resource {
            provider_id: "anthropic",
            model_id: "claude-sonnet-4-5",
            account_ref: account,
            profile_ref: "claude-sonnet",
        }
    }

    #[test]
    fn keys_name_the_resource_of_the_scope() {
        let k = |s| CircuitKey::for_failure(Some(s), resource(None)).map(|k| (k.scope, k.resource));
        assert_eq!(
            k(Scope::Provider),
            Some((CircuitScope::Provider, "anthropic".into()))
        );
        assert_eq!(
            k(Scope::Model),
            Some((CircuitScope::Model, "anthropic/claude-sonnet-4-5".into()))
        );
        // Without an account_ref two candidates cannot be proven to share
        // an account: the candidate's profile stands in.
        assert_eq!(
            k(Scope::Account),
            Some((CircuitScope::Profile, "claude-sonnet".into()))
        );
        assert_eq!(
            CircuitKey::for_failure(Some(Scope::Account), resource(Some("team-a")))
                .map(|k| (k.scope, k.resource)),
            Some((CircuitScope::Account, "anthropic/team-a".into()))
        );
        assert_eq!(k(Scope::Request), None);
        assert_eq!(CircuitKey::for_failure(None, resource(None)), None);
        let nameless = Resource {
            provider_id: " ",
            ..resource(None)
        };
        assert_eq!(
            CircuitKey::for_failure(Some(Scope::Provider), nameless),
            None
        );
    }

    #[test]
    fn only_confident_recovering_failures_open() {
        let mut f = hard(None);
        assert!(open(None, key(), "quota_limited", &f, "r0", t(0)).is_some());
        f.confidence = Confidence::Medium;
        assert!(open(None, key(), "quota_limited", &f, "r0", t(0)).is_none());
        f = FailureFacts {
            class: ErrorClass::NotProvider,
            ..hard(None)
        };
        assert!(open(None, key(), "request_invalid", &f, "r0", t(0)).is_none());
    }

    #[test]
    fn a_validated_reset_decides_else_a_growing_capped_cooldown() {
        let c = open(
            None,
            key(),
            "quota_limited",
            &hard(Some(t(900))),
            "r0",
            t(0),
        )
        .expect("opens");
        assert_eq!(c.state, CircuitState::Open { until: t(900) });
        let c = open(None, key(), "provider_overloaded", &hard(None), "r0", t(0)).expect("opens");
        assert_eq!(c.state, CircuitState::Open { until: t(30) });
        assert_eq!(cooldown(1).num_seconds(), 30);
        assert_eq!(cooldown(2).num_seconds(), 60);
        assert_eq!(cooldown(3).num_seconds(), 120);
        assert_eq!(cooldown(40).num_seconds(), MAX_COOLDOWN_SECONDS);
        // A reset in the past is no hint.
        let c = open(None, key(), "x", &hard(Some(t(-5))), "r0", t(0)).expect("opens");
        assert_eq!(c.state, CircuitState::Open { until: t(30) });
    }

    #[test]
    fn a_shorter_hint_never_shortens_an_open_circuit() {
        let c = open(
            None,
            key(),
            "quota_limited",
            &hard(Some(t(900))),
            "r0",
            t(0),
        )
        .expect("opens");
        let again = open(
            Some(&c),
            key(),
            "quota_limited",
            &hard(Some(t(60))),
            "r0",
            t(10),
        )
        .expect("extends");
        assert_eq!(again.state, CircuitState::Open { until: t(900) });
        let later = open(
            Some(&c),
            key(),
            "quota_limited",
            &hard(Some(t(1800))),
            "r0",
            t(10),
        )
        .expect("extends");
        assert_eq!(later.state, CircuitState::Open { until: t(1800) });
    }

    #[test]
    fn exactly_one_probe_after_expiry() {
        let c = open(None, key(), "provider_overloaded", &hard(None), "r0", t(0)).expect("opens");
        assert!(claim_probe(&c, "r1", t(29)).is_none(), "not before expiry");
        let probing = claim_probe(&c, "r1", t(30)).expect("first claim");
        assert!(claim_probe(&probing, "r2", t(31)).is_none(), "one holder");
        assert_eq!(
            eligibility(Some(&probing), "r1", t(31)),
            Eligibility::Eligible
        );
        assert_eq!(
            eligibility(Some(&probing), "r2", t(31)),
            Eligibility::AwaitingProbe {
                holder: "r1".into(),
                lease_until: t(30 + PROBE_LEASE_SECONDS),
            }
        );
        // A silent holder loses the probe after its lease.
        let late = t(30 + PROBE_LEASE_SECONDS);
        assert_eq!(
            eligibility(Some(&probing), "r2", late),
            Eligibility::ProbeAvailable
        );
        assert!(claim_probe(&probing, "r2", late).is_some());
    }

    #[test]
    fn the_probes_outcome_closes_or_reopens_longer() {
        let c = open(None, key(), "provider_overloaded", &hard(None), "r0", t(0)).expect("opens");
        let probing = claim_probe(&c, "r1", t(30)).expect("probe");
        assert!(
            probe_succeeded(&probing, "r2", t(31)).is_none(),
            "only the holder"
        );
        let closed = probe_succeeded(&probing, "r1", t(31)).expect("closes");
        assert_eq!(closed.state, CircuitState::Closed);
        assert_eq!(closed.openings, 0);

        let reopened = probe_failed(&probing, "r1", "provider_overloaded", &hard(None), t(40))
            .expect("reopens");
        assert_eq!(reopened.openings, 2);
        assert_eq!(reopened.state, CircuitState::Open { until: t(100) });
        let with_hint = probe_failed(&probing, "r1", "quota_limited", &hard(Some(t(5000))), t(40))
            .expect("reopens");
        assert_eq!(with_hint.state, CircuitState::Open { until: t(5000) });
        // The probe's own task failing says nothing about the resource.
        let task = FailureFacts {
            class: ErrorClass::NotProvider,
            ..hard(None)
        };
        let released =
            probe_failed(&probing, "r1", "tool_failure", &task, t(40)).expect("released");
        assert_eq!(
            eligibility(Some(&released), "r2", t(40)),
            Eligibility::ProbeAvailable
        );
    }

    #[test]
    fn blocked_routes_see_the_deadline_and_waiters_go_a_few_at_a_time() {
        let c = open(
            None,
            key(),
            "quota_limited",
            &hard(Some(t(900))),
            "r0",
            t(0),
        )
        .expect("opens");
        assert_eq!(
            eligibility(Some(&c), "r9", t(10)),
            Eligibility::BlockedUntil(t(900))
        );
        assert_eq!(eligibility(None, "r9", t(10)), Eligibility::Eligible);
        let times = release_times(12, t(0));
        assert_eq!(times.len(), 12);
        assert_eq!(times.iter().filter(|x| **x == t(0)).count(), RELEASE_BATCH);
        assert!(times.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(*times.last().expect("last"), t(2));
    }

    #[test]
    fn the_owner_keeps_its_own_pace_and_everyone_else_is_held() {
        let c = open(None, key(), "provider_overloaded", &hard(None), "r0", t(0)).expect("opens");
        assert_eq!(c.owner.as_deref(), Some("r0"));
        // The owner's retry at 5 s goes, as its policy says, and probes.
        assert_eq!(
            eligibility(Some(&c), "r0", t(5)),
            Eligibility::ProbeAvailable
        );
        let probing = claim_probe(&c, "r0", t(5)).expect("the owner probes early");
        assert_eq!(
            hold([&probing], "r1", t(6)),
            Hold::Held {
                key: key(),
                until: t(5 + PROBE_LEASE_SECONDS),
                awaiting_probe: true
            }
        );
        // Another route extending it does not take it over.
        let extended = open(
            Some(&c),
            key(),
            "provider_overloaded",
            &hard(Some(t(90))),
            "r1",
            t(1),
        )
        .expect("extends");
        assert_eq!(extended.owner.as_deref(), Some("r0"));
        assert_eq!(
            hold([&extended], "r1", t(2)),
            Hold::Held {
                key: key(),
                until: t(90),
                awaiting_probe: false
            }
        );
        // The owner's failing probe reopens it, still its own.
        let again = on_failure(
            Some(&probing),
            key(),
            "provider_overloaded",
            &hard(None),
            "r0",
            t(6),
        )
        .expect("reopens");
        assert_eq!(again.owner.as_deref(), Some("r0"));
        assert_eq!(again.openings, 2);
        assert!(matches!(again.state, CircuitState::Open { until } if until == t(66)));
    }

    #[test]
    fn a_candidate_is_held_by_the_latest_of_its_circuits() {
        let model = CircuitKey {
            scope: CircuitScope::Model,
            resource: "anthropic/claude-sonnet-4-5".into(),
        };
        let provider = open(None, key(), "x", &hard(Some(t(60))), "r0", t(0)).expect("opens");
        let model_c =
            open(None, model.clone(), "x", &hard(Some(t(120))), "r0", t(0)).expect("opens");
        let held = hold([&provider, &model_c], "r1", t(10));
        assert_eq!(held.until(), Some(t(120)));
        assert!(matches!(held, Hold::Held { key, .. } if key == model));
        // Both expired: free, and the next attempt probes both.
        assert_eq!(
            hold([&provider, &model_c], "r1", t(200)),
            Hold::Free {
                probes: vec![key(), model.clone()]
            }
        );
        assert_eq!(hold([], "r1", t(0)), Hold::Free { probes: vec![] });
        let keys = CircuitKey::all_for(resource(Some("team-a")));
        let names: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
        assert_eq!(
            names,
            [
                "provider:anthropic",
                "account:anthropic/team-a",
                "model:anthropic/claude-sonnet-4-5",
                "profile:claude-sonnet"
            ]
        );
        for k in keys {
            assert_eq!(k.to_string().parse::<CircuitKey>(), Ok(k));
        }
        assert!("nope".parse::<CircuitKey>().is_err());
        assert!("galaxy:x".parse::<CircuitKey>().is_err());
    }

    #[test]
    fn an_administrator_releases_or_expires_a_circuit_that_holds_routes() {
        let c = open(
            None,
            key(),
            "quota_limited",
            &hard(Some(t(900))),
            "r0",
            t(0),
        )
        .expect("opens");
        let released = operate(&c, Operation::Release, t(10)).expect("releases");
        assert_eq!(released.state, CircuitState::Closed);
        assert_eq!((released.openings, released.owner.as_deref()), (0, None));
        assert_eq!(
            hold([&released], "r1", t(10)),
            Hold::Free { probes: vec![] }
        );
        // Probe now: the next route to go takes the probe, and only one.
        let expired = operate(&c, Operation::Probe, t(10)).expect("expires");
        assert_eq!(
            eligibility(Some(&expired), "r1", t(10)),
            Eligibility::ProbeAvailable
        );
        let probing = claim_probe(&expired, "r1", t(10)).expect("r1 probes");
        assert!(claim_probe(&probing, "r2", t(10)).is_none());
        // A probe in flight is given up: its holder no longer decides.
        let again = operate(&probing, Operation::Probe, t(20)).expect("expires");
        assert!(probe_succeeded(&again, "r1", t(21)).is_none());
        assert!(claim_probe(&again, "r2", t(21)).is_some());
        let closed = operate(&probing, Operation::Release, t(20)).expect("releases");
        for op in [Operation::Release, Operation::Probe] {
            let why = operate(&closed, op, t(30)).expect_err("closed");
            assert!(why.contains("is closed"), "{why}");
        }
    }

    #[test]
    fn returns_after_a_probe_go_a_few_a_second() {
        let closed = Circuit {
            key: key(),
            state: CircuitState::Closed,
            openings: 0,
            code: "quota_limited".into(),
            owner: None,
            changed_at: t(0),
            released: 0,
        };
        let mut c = closed.clone();
        let mut went = 0;
        while let Pace::Go(next) = pace_return(&c, t(0)) {
            c = next;
            went += 1;
        }
        assert_eq!(went, RELEASE_BATCH);
        assert_eq!(pace_return(&c, t(0)), Pace::NotYet);
        assert!(matches!(pace_return(&c, t(1)), Pace::Go(_)));
        // Long after the close, nothing is paced; an open circuit is not
        // this function's business.
        assert_eq!(pace_return(&c, t(RETURN_WINDOW_SECONDS + 1)), Pace::Free);
        let open = Circuit {
            state: CircuitState::Open { until: t(60) },
            ..closed
        };
        assert_eq!(pace_return(&open, t(0)), Pace::Free);
    }
}
