//! Shared resource circuits: one provider, account, model or profile that
//! is failing for everyone, so a hundred routes do not hammer it.
//!
//! SPEC.md: "Shared resource circuits remain an eligibility input … Expired
//! circuits recover through one exclusive probe"; "If many sessions share an
//! open resource circuit, one probe owns recovery and the rest continue
//! waiting or evaluate other candidates without stampede."
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

use crate::classify::{Confidence, Scope};
use app::policy::ErrorClass;
use chrono::{DateTime, Duration, Utc};

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

/// What kind of resource a circuit guards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CircuitScope {
    Provider,
    Account,
    Model,
    Profile,
}

impl CircuitScope {
    pub fn as_str(self) -> &'static str {
        match self {
            CircuitScope::Provider => "provider",
            CircuitScope::Account => "account",
            CircuitScope::Model => "model",
            CircuitScope::Profile => "profile",
        }
    }
}

/// One shared resource: the scope and a stable, non-secret name for it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CircuitKey {
    pub scope: CircuitScope,
    /// `anthropic`, `anthropic/acct-team-a`, `anthropic/claude-sonnet-4-5`,
    /// or the profile reference.
    pub resource: String,
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

impl CircuitKey {
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
    pub changed_at: DateTime<Utc>,
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

/// Opens (or extends) a circuit for a qualifying failure. A circuit that
/// is already open keeps the later of its deadline and the new one, so a
/// shorter hint never shortens it; a probing circuit is left to its probe.
pub fn open(
    existing: Option<&Circuit>,
    key: CircuitKey,
    code: &str,
    failure: &FailureFacts,
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
    let until = match existing.map(|c| &c.state) {
        Some(CircuitState::Open { until: old }) => until.max(*old),
        _ => until,
    };
    Some(Circuit {
        key,
        state: CircuitState::Open { until },
        openings,
        code: code.to_string(),
        changed_at: now,
    })
}

/// A validated future reset, else the cooldown.
fn deadline(reset_at: Option<DateTime<Utc>>, openings: u32, now: DateTime<Utc>) -> DateTime<Utc> {
    match reset_at {
        Some(r) if r > now => r,
        _ => now + cooldown(openings),
    }
}

/// `route` asks to probe: granted when the circuit is open and expired, or
/// probing with a lease that ran out. Exactly one holder at a time.
pub fn claim_probe(c: &Circuit, route: &str, now: DateTime<Utc>) -> Option<Circuit> {
    let free = match &c.state {
        CircuitState::Open { until } => now >= *until,
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
            changed_at: now,
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
        changed_at: now,
        key: c.key.clone(),
    })
}

/// What a route may do with a candidate on this circuit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Eligibility {
    Eligible,
    /// Ineligible until then (open): a retry or wait moves its deadline
    /// there, a switch looks for another candidate.
    BlockedUntil(DateTime<Utc>),
    /// Another route is probing: wait for its outcome.
    AwaitingProbe {
        holder: String,
    },
    /// Expired and unclaimed: this route may take the probe.
    ProbeAvailable,
}

pub fn eligibility(c: Option<&Circuit>, route: &str, now: DateTime<Utc>) -> Eligibility {
    match c.map(|c| &c.state) {
        None | Some(CircuitState::Closed) => Eligibility::Eligible,
        Some(CircuitState::Open { until }) if now < *until => Eligibility::BlockedUntil(*until),
        Some(CircuitState::Open { .. }) => Eligibility::ProbeAvailable,
        Some(CircuitState::Probing { holder, .. }) if holder == route => Eligibility::Eligible,
        Some(CircuitState::Probing { lease_until, .. }) if now >= *lease_until => {
            Eligibility::ProbeAvailable
        }
        Some(CircuitState::Probing { holder, .. }) => Eligibility::AwaitingProbe {
            holder: holder.clone(),
        },
    }
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
        assert!(open(None, key(), "quota_limited", &f, t(0)).is_some());
        f.confidence = Confidence::Medium;
        assert!(open(None, key(), "quota_limited", &f, t(0)).is_none());
        f = FailureFacts {
            class: ErrorClass::NotProvider,
            ..hard(None)
        };
        assert!(open(None, key(), "request_invalid", &f, t(0)).is_none());
    }

    #[test]
    fn a_validated_reset_decides_else_a_growing_capped_cooldown() {
        let c = open(None, key(), "quota_limited", &hard(Some(t(900))), t(0)).expect("opens");
        assert_eq!(c.state, CircuitState::Open { until: t(900) });
        let c = open(None, key(), "provider_overloaded", &hard(None), t(0)).expect("opens");
        assert_eq!(c.state, CircuitState::Open { until: t(30) });
        assert_eq!(cooldown(1).num_seconds(), 30);
        assert_eq!(cooldown(2).num_seconds(), 60);
        assert_eq!(cooldown(3).num_seconds(), 120);
        assert_eq!(cooldown(40).num_seconds(), MAX_COOLDOWN_SECONDS);
        // A reset in the past is no hint.
        let c = open(None, key(), "x", &hard(Some(t(-5))), t(0)).expect("opens");
        assert_eq!(c.state, CircuitState::Open { until: t(30) });
    }

    #[test]
    fn a_shorter_hint_never_shortens_an_open_circuit() {
        let c = open(None, key(), "quota_limited", &hard(Some(t(900))), t(0)).expect("opens");
        let again =
            open(Some(&c), key(), "quota_limited", &hard(Some(t(60))), t(10)).expect("extends");
        assert_eq!(again.state, CircuitState::Open { until: t(900) });
        let later = open(
            Some(&c),
            key(),
            "quota_limited",
            &hard(Some(t(1800))),
            t(10),
        )
        .expect("extends");
        assert_eq!(later.state, CircuitState::Open { until: t(1800) });
    }

    #[test]
    fn exactly_one_probe_after_expiry() {
        let c = open(None, key(), "provider_overloaded", &hard(None), t(0)).expect("opens");
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
                holder: "r1".into()
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
        let c = open(None, key(), "provider_overloaded", &hard(None), t(0)).expect("opens");
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
        let c = open(None, key(), "quota_limited", &hard(Some(t(900))), t(0)).expect("opens");
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
}
