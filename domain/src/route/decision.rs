//! What a failure led to, as values: the decision's kind, why a route
//! stopped for a person, and where the route went. The server writes them,
//! the browser and the runner word them (`crate::words`); nothing reads
//! prose back. Each enum's wire names come from one `snake_case` rule that
//! serde and `strum` both apply (checked by the tests below).

use super::RouteState;
use crate::ids::Generation;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

wire_names! {
    /// Why a failure authorises no automatic recovery.
    pub enum Rejection {
        /// Evidence for another generation or invocation: nothing changes.
        Stale,
        /// Unknown, low-confidence or conflicting evidence.
        Unclassified,
        /// Not the provider's failure (context window, tool failure, …).
        NotProvider,
        /// Output or tool activity may already have happened: replay is unsafe.
        EffectUnsafe,
    }
}

wire_names! {
    /// A decision as the API names it (`decision.kind`, an attempt's
    /// `decision`): the four policy outcomes or a rejection.
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum DecisionKind {
        WaitForReset,
        Retry,
        Skip,
        Stop,
        Stale,
        Unclassified,
        NotProvider,
        EffectUnsafe,
        /// Not a decision on a failure: output or tool activity of an
        /// earlier attempt arrived after that attempt's failure had
        /// already been recovered from (the successor withdrawn and the
        /// route stopped, or — once the successor was delivered — recorded
        /// so a person sees the work may have run twice).
        LateEffect,
        /// Not a decision on a failure: after a success, the route's next
        /// invocation went back to a candidate higher in the profile's
        /// order that is eligible again (the profile prefers
        /// `first_eligible`).
        Returned,
    }
}

wire_names! {
    /// Why a current failure was judged unsafe to recover from
    /// automatically (the decision `effect_unsafe`): the first of these
    /// that holds, in this order.
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum UnsafeReason {
        /// Output or tool activity was reported (`POST /effects`) for the
        /// failed invocation.
        EffectsReported,
        /// The failure report itself carries output or tool activity
        /// (`acp_update` items before the error).
        EffectsInEvidence,
        /// The report has no `phase`, so nobody can tell whether the agent
        /// had started working: adapters must send one.
        BoundaryUnknown,
        /// `phase: stream` — output had started when the failure came.
        OutputStarted,
        /// `phase: teardown` — the prompt may have completed.
        AtTeardown,
        /// A resumable failure whose policy said skip: another candidate
        /// cannot resume this provider's session, it could only repeat
        /// the prompt.
        ResumeNeedsSameCandidate,
    }
}

impl From<Rejection> for DecisionKind {
    fn from(r: Rejection) -> DecisionKind {
        match r {
            Rejection::Stale => DecisionKind::Stale,
            Rejection::Unclassified => DecisionKind::Unclassified,
            Rejection::NotProvider => DecisionKind::NotProvider,
            Rejection::EffectUnsafe => DecisionKind::EffectUnsafe,
        }
    }
}

/// Why a route is `action_required` (the snapshot's `reason`).
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, strum::Display, strum::EnumString,
)]
#[serde(from = "String", into = "String")]
#[strum(serialize_all = "snake_case")]
pub enum StopReason {
    /// The failure was rejected by the evaluator (its [`Rejection`]).
    Stale,
    Unclassified,
    NotProvider,
    EffectUnsafe,
    /// An effect arrived for an invocation that had already failed.
    EffectAfterFailure,
    /// The candidate's policy says stop once recovery is exhausted.
    StoppedByPolicy,
    /// Skip was decided but every candidate is excluded this cycle.
    NoEligibleCandidate,
    /// The profile lost the route's candidate or cannot be read.
    ProfileChanged,
    /// The profile's stored document cannot be mapped to a policy (a
    /// legacy shape the normaliser does not know): it authorises no work
    /// until someone saves it again.
    ProfileMisconfigured,
    CancelledByUser,
    StoppedByUser,
    /// A claimed dispatch was never acknowledged.
    AmbiguousDispatch,
    /// A dispatch was not claimed within the deployment's dispatch
    /// timeout (no caller is picking the route's work up).
    DispatchNotClaimed,
    /// Every remaining candidate is held by a shared circuit for longer
    /// than the deployment waits for a hold to end.
    AllCandidatesHeld,
    /// A reason this build does not know (a newer server's), kept as sent.
    #[strum(default)]
    Other(String),
}

impl From<Rejection> for StopReason {
    fn from(r: Rejection) -> StopReason {
        match r {
            Rejection::Stale => StopReason::Stale,
            Rejection::Unclassified => StopReason::Unclassified,
            Rejection::NotProvider => StopReason::NotProvider,
            Rejection::EffectUnsafe => StopReason::EffectUnsafe,
        }
    }
}

open_wire_names!(StopReason);

/// Where a failure report left the route (a decision's and an attempt's
/// `outcome`). On the wire an object tagged by `kind`:
/// `{"kind": "stopped", "reason"}`, `{"kind": "switching", "to"}` (the
/// candidate's label), `{"kind": "waiting", "state", "until"}`,
/// `{"kind": "now", "state"}` (nothing pending) or
/// `{"kind": "unchanged", "generation", "state"}` (the report was about an
/// attempt the route had left). Stored attempt rows keep a short label
/// instead ([`fmt::Display`] and [`FromStr`]), which nothing on the wire
/// uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RouteOutcome {
    /// Stopped for a person.
    Stopped {
        #[cfg_attr(feature = "openapi", schema(value_type = String, example = "unclassified"))]
        reason: StopReason,
    },
    /// Moving to another candidate (its label).
    Switching { to: String },
    /// Waiting in `state` for a deadline.
    Waiting {
        state: RouteState,
        #[serde(deserialize_with = "crate::wire_time::rfc3339")]
        until: DateTime<Utc>,
    },
    /// Now in `state`, with nothing pending.
    #[serde(rename = "now")]
    In { state: RouteState },
    /// Nothing changed: the report was about an attempt the route left.
    Unchanged {
        #[cfg_attr(feature = "openapi", schema(value_type = i64))]
        generation: Generation,
        state: RouteState,
    },
}

const STOPPED: &str = "action_required: ";
const SWITCHING: &str = "switching to ";
const UNCHANGED: &str = "unchanged: the route is at generation ";
const UNTIL: &str = " until ";

impl fmt::Display for RouteOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RouteOutcome::Stopped { reason } => write!(f, "{STOPPED}{reason}"),
            RouteOutcome::Switching { to } => write!(f, "{SWITCHING}{to}"),
            RouteOutcome::Waiting { state, until } => {
                write!(f, "{state}{UNTIL}{}", until.to_rfc3339())
            }
            RouteOutcome::In { state } => write!(f, "{state}"),
            RouteOutcome::Unchanged { generation, state } => {
                write!(f, "{UNCHANGED}{generation} ({state})")
            }
        }
    }
}

/// A label that is none of [`RouteOutcome`]'s forms.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a route outcome: {0:?}")]
pub struct UnknownOutcome(pub String);

impl FromStr for RouteOutcome {
    type Err = UnknownOutcome;

    /// Reads the wire label back (an API answer, a stored attempt row).
    fn from_str(s: &str) -> Result<RouteOutcome, UnknownOutcome> {
        let unknown = || UnknownOutcome(s.to_string());
        if let Some(reason) = s.strip_prefix(STOPPED) {
            return Ok(RouteOutcome::Stopped {
                reason: StopReason::from(reason.to_string()),
            });
        }
        if let Some(to) = s.strip_prefix(SWITCHING) {
            return Ok(RouteOutcome::Switching { to: to.to_string() });
        }
        if let Some(rest) = s.strip_prefix(UNCHANGED) {
            let (generation, state) = rest
                .strip_suffix(')')
                .and_then(|r| r.split_once(" ("))
                .ok_or_else(unknown)?;
            return Ok(RouteOutcome::Unchanged {
                generation: Generation(generation.parse().map_err(|_| unknown())?),
                state: state.parse().map_err(|_| unknown())?,
            });
        }
        if let Some((state, until)) = s.split_once(UNTIL) {
            return Ok(RouteOutcome::Waiting {
                state: state.parse().map_err(|_| unknown())?,
                until: DateTime::parse_from_rfc3339(until)
                    .map_err(|_| unknown())?
                    .to_utc(),
            });
        }
        s.parse()
            .map(|state| RouteOutcome::In { state })
            .map_err(|_| unknown())
    }
}

/// In the browser: by `kind`, field for field as serde reads it.
#[cfg(any(test, feature = "reader"))]
impl crate::wire_json::FromJson for RouteOutcome {
    fn from_json(v: &serde_json::Value) -> Result<RouteOutcome, crate::wire_json::Error> {
        let o = crate::wire_json::Fields::of(v)?;
        let kind: String = o.get("kind")?;
        Ok(match kind.as_str() {
            "stopped" => RouteOutcome::Stopped {
                reason: o.get("reason")?,
            },
            "switching" => RouteOutcome::Switching { to: o.get("to")? },
            "waiting" => RouteOutcome::Waiting {
                state: o.get("state")?,
                until: o.get("until")?,
            },
            "now" => RouteOutcome::In {
                state: o.get("state")?,
            },
            "unchanged" => RouteOutcome::Unchanged {
                generation: o.get("generation")?,
                state: o.get("state")?,
            },
            _ => return Err(crate::wire_json::Error),
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use strum::VariantArray;

    /// serde's name and strum's name of every variant are the same string.
    pub(crate) fn names_agree<T>()
    where
        T: VariantArray + Serialize + Into<&'static str> + Copy + fmt::Debug,
    {
        for v in T::VARIANTS {
            let name: &'static str = (*v).into();
            assert_eq!(serde_json::to_value(v).unwrap(), name, "{v:?}");
        }
    }

    #[test]
    fn serde_and_strum_names_agree() {
        names_agree::<Rejection>();
        names_agree::<DecisionKind>();
        names_agree::<RouteState>();
        names_agree::<super::super::CallerKind>();
        names_agree::<super::super::PendingKind>();
        names_agree::<super::super::DispatchReason>();
        names_agree::<super::super::DispatchState>();
        names_agree::<super::super::ScheduleState>();
    }

    #[test]
    fn stop_reasons_keep_unknown_names() {
        let r: StopReason = serde_json::from_value("ambiguous_dispatch".into()).unwrap();
        assert_eq!(r, StopReason::AmbiguousDispatch);
        let other: StopReason = serde_json::from_value("something_new".into()).unwrap();
        assert_eq!(other, StopReason::Other("something_new".into()));
        assert_eq!(serde_json::to_value(&other).unwrap(), "something_new");
        assert_eq!(
            serde_json::to_value(StopReason::from(Rejection::EffectUnsafe)).unwrap(),
            "effect_unsafe"
        );
    }

    #[test]
    fn outcomes_round_trip_as_labels_and_on_the_wire() {
        let until = DateTime::parse_from_rfc3339("2026-11-30T12:00:05.250Z")
            .unwrap()
            .to_utc();
        let cases = [
            (
                RouteOutcome::Stopped {
                    reason: StopReason::Unclassified,
                },
                "action_required: unclassified",
            ),
            (
                RouteOutcome::Switching {
                    to: "Codex (fast)".into(),
                },
                "switching to Codex (fast)",
            ),
            (
                RouteOutcome::Waiting {
                    state: RouteState::RetryWait,
                    until,
                },
                "retry_wait until 2026-11-30T12:00:05.250+00:00",
            ),
            (
                RouteOutcome::In {
                    state: RouteState::Active,
                },
                "active",
            ),
            (
                RouteOutcome::Unchanged {
                    generation: Generation(4),
                    state: RouteState::Retrying,
                },
                "unchanged: the route is at generation 4 (retrying)",
            ),
        ];
        for (outcome, label) in cases {
            assert_eq!(outcome.to_string(), label);
            assert_eq!(label.parse::<RouteOutcome>(), Ok(outcome.clone()));
            let wire = serde_json::to_value(&outcome).unwrap();
            assert_eq!(
                serde_json::from_value::<RouteOutcome>(wire.clone()).unwrap(),
                outcome
            );
            assert_eq!(
                crate::wire_json::read::<RouteOutcome>(&wire.to_string()).ok(),
                Some(outcome.clone())
            );
        }
        assert!("moved somewhere".parse::<RouteOutcome>().is_err());
        assert!(serde_json::from_value::<RouteOutcome>("active".into()).is_err());
        let waiting = RouteOutcome::Waiting {
            state: RouteState::RetryWait,
            until,
        };
        assert_eq!(
            serde_json::to_value(&waiting).unwrap(),
            serde_json::json!({
                "kind": "waiting",
                "state": "retry_wait",
                "until": "2026-11-30T12:00:05.250Z",
            })
        );
    }
}
