//! Row types for routes, attempts, schedules, dispatches and events, and
//! [`Commit`]: everything one route transition writes, applied by the store
//! in a single transaction fenced by the route's generation.

/// A route row; `memory`, `pending` and `last_failure` are JSON text.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct RouteRow {
    pub id: String,
    pub profile_id: String,
    pub caller_kind: String,
    pub caller_ref: String,
    pub state: String,
    pub generation: i64,
    pub cycle: i64,
    pub candidate_index: i64,
    pub candidate_id: String,
    pub candidate_label: String,
    pub invocation_id: String,
    pub prompt_generation: i64,
    pub effects: i64,
    pub provider_session_id: Option<String>,
    pub memory: String,
    pub pending: Option<String>,
    pub last_failure: Option<String>,
    pub reason: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct AttemptRow {
    pub route_id: String,
    pub seq: i64,
    pub generation: i64,
    pub cycle: i64,
    pub candidate_index: i64,
    pub candidate_id: String,
    pub candidate_label: String,
    pub invocation_id: String,
    pub code: String,
    pub class: String,
    pub catalogue_version: String,
    pub classifier_rule: String,
    pub safe_excerpt: String,
    pub http_status: Option<i64>,
    pub policy: String,
    pub decision: String,
    pub retry_ordinal: i64,
    pub deadline: Option<i64>,
    pub outcome: String,
    pub created_at: i64,
    /// The whole classification as JSON (absent on attempts stored before
    /// it was kept).
    pub classification: Option<String>,
    /// What the row says beyond its columns, as JSON (`AttemptDetail`).
    pub detail: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ScheduleRow {
    pub id: String,
    pub route_id: String,
    pub generation: i64,
    /// `retry` or `reset_wait`.
    pub kind: String,
    pub deadline: i64,
    /// `armed`, `fired` or `void`.
    pub state: String,
    pub created_at: i64,
    /// The circuit holding this schedule back (`provider:anthropic`), if any.
    pub circuit: Option<String>,
}

/// A shared resource circuit as stored (see `crate::circuits`); read from
/// JSON too, by its column names (PostgreSQL's read for a decision).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow, serde::Deserialize)]
pub struct CircuitRow {
    pub scope: String,
    pub resource: String,
    /// `closed`, `open` or `probing`.
    pub state: String,
    pub open_until: Option<i64>,
    pub probe_holder: Option<String>,
    pub probe_until: Option<i64>,
    pub owner: Option<String>,
    pub openings: i64,
    pub code: String,
    pub changed_at: i64,
    /// Compare-and-swap fence: one more on every write.
    pub version: i64,
    /// Closed: the routes that returned to it since (failback's pace).
    #[serde(default)]
    #[sqlx(default)]
    pub released: i64,
}

/// One circuit change inside a [`Commit`]: the row after it, written only
/// if the stored version is still `expected_version` (`None`: the row must
/// not exist yet), plus its event.
#[derive(Debug, Clone)]
pub struct CircuitWrite {
    pub row: CircuitRow,
    pub expected_version: Option<i64>,
    /// `opened`, `extended`, `probe_claimed`, `closed`, `reopened`, …
    pub event_kind: String,
    /// The route whose change caused it.
    pub route_id: String,
    pub event_payload: String,
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct CircuitEventRow {
    pub id: i64,
    pub scope: String,
    pub resource: String,
    pub kind: String,
    pub route_id: String,
    pub payload: String,
    pub created_at: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct DispatchRow {
    pub id: String,
    pub route_id: String,
    pub generation: i64,
    pub invocation_id: String,
    pub prompt_generation: i64,
    pub candidate_index: i64,
    pub candidate_id: String,
    pub candidate_label: String,
    pub caller_kind: String,
    /// `retry`, `reset_retry` or `switch`.
    pub reason: String,
    /// `pending`, `claimed`, `acked` or `void`.
    pub state: String,
    pub lease_until: Option<i64>,
    pub created_at: i64,
    pub claimed_at: Option<i64>,
    pub acked_at: Option<i64>,
    /// The provider session to resume instead of sending the prompt
    /// again, as JSON (`domain::route::Resume`); `None` for a plain attempt.
    pub resume: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct EventRow {
    pub id: i64,
    pub route_id: String,
    pub kind: String,
    pub payload: String,
    pub created_at: i64,
    /// Who caused it ([`domain::audit::Actor`] as JSON); `None` on events
    /// committed before actors were recorded.
    pub actor: Option<String>,
}

/// Everything one transition writes. The store applies it atomically:
/// the route row is replaced only if its generation is still
/// `expected_generation` (or inserted when that is `None`); with
/// `void_pending`, armed schedules and open dispatches of older generations
/// are voided; then the attempt, schedule, dispatch and event below are
/// added, and the circuit changes applied.
#[derive(Debug, Clone, Default)]
pub struct Commit {
    pub expected_generation: Option<i64>,
    pub route: Option<RouteRow>,
    pub attempt: Option<AttemptRow>,
    pub schedule: Option<ScheduleRow>,
    /// A schedule this transition consumes (must still be armed).
    pub fire_schedule: Option<String>,
    pub dispatch: Option<DispatchRow>,
    /// Void armed schedules and open dispatches of older generations (set
    /// when the route leaves a state that can have them).
    pub void_pending: bool,
    /// A claimed dispatch this transition acknowledges (must still be claimed).
    pub ack_dispatch: Option<(String, i64)>,
    /// A claimed dispatch whose lease this transition declares run out
    /// (must still be claimed). An acknowledgement does not move the
    /// route's generation, so without this an acknowledgement committed
    /// between the expiry check and this commit would be followed by the
    /// route stopping as if nothing had been acknowledged.
    pub expire_dispatch: Option<String>,
    /// A pending dispatch this transition withdraws because nobody claimed
    /// it in time (must still be pending): a claim committed between the
    /// check and this commit keeps its dispatch and the route goes on.
    pub withdraw_unclaimed: Option<String>,
    /// Circuit changes the transition causes, each fenced by its version;
    /// a moved-on circuit answers `StaleCircuit` and nothing is written.
    pub circuits: Vec<CircuitWrite>,
    /// A new route's idempotency key, inserted with it; a key already
    /// taken answers `KeyTaken` and nothing is written.
    pub route_key: Option<RouteKeyRow>,
    /// Who opens a new route (a token's or a person's id), inserted with
    /// it into `route_openers`: reports and claims for the route need
    /// this principal or `routes:any`.
    pub opened_by: Option<String>,
    pub event_kind: String,
    /// The event's payload (a route snapshot), without its id.
    pub event_payload: String,
    /// Who caused the transition ([`domain::audit::Actor`] as JSON),
    /// stored with its event.
    pub event_actor: Option<String>,
    /// The audit entry of a person's or token's manual action (a route
    /// action, a route's end), written in the transition's transaction: a
    /// fenced-out transition writes none, a committed one exactly one.
    pub audit: Option<super::AuditRow>,
}

/// The idempotency key a route was created with (`route_keys`): who sent
/// it, the key, the route, and the creation request in canonical form.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct RouteKeyRow {
    pub scope: String,
    pub key: String,
    pub route_id: String,
    pub request: String,
    pub created_at: i64,
}

/// Filter for listing routes, newest first (by creation, then id: an
/// order no write changes, so a cursor never sees a route twice or skips
/// one that existed when paging began).
#[derive(Debug, Clone, Default)]
pub struct RouteFilter {
    pub profile_id: Option<String>,
    pub state: Option<String>,
    pub caller_kind: Option<String>,
    /// The caller's own reference, exactly.
    pub caller_ref: Option<String>,
    /// Only routes after this one in the list's order: its creation time
    /// (ms) and id.
    pub after: Option<(i64, String)>,
    pub limit: i64,
}

/// Filter for claiming dispatches.
#[derive(Debug, Clone, Default)]
pub struct ClaimFilter {
    pub route_id: Option<String>,
    pub caller_kind: Option<String>,
    pub limit: i64,
    /// Only routes this principal opened (and those opened before
    /// openers were recorded); `None`: every route (`routes:any`).
    pub opened_by: Option<String>,
}

/// One distinct entry of the unknown-evidence log, as stored (see
/// `classify::unknown`): only the sanitised excerpt, keyed by it
/// with digit runs folded.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct UnknownRow {
    pub key: String,
    pub safe_excerpt: String,
    pub count: i64,
    pub first_seen: i64,
    pub last_seen: i64,
    pub classifier_rule: String,
    pub provider_id: Option<String>,
    pub model_id: Option<String>,
    pub catalogue_version: String,
    /// The agent of the latest sighting.
    pub agent: Option<String>,
    /// The latest sighting's sanitised skeleton, as JSON.
    pub skeleton: Option<String>,
}

/// A route attempt an unknown-log entry was seen in.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct UnknownSightingRow {
    pub key: String,
    pub route_id: String,
    pub attempt_seq: i64,
    pub seen_at: i64,
}

/// How many rows are in each state, for the metrics gauges: every route
/// and circuit state, armed schedules, and dispatches not yet acknowledged
/// (acknowledged and void rows only accumulate).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StateCounts {
    pub routes: Vec<(String, i64)>,
    pub circuits: Vec<(String, i64)>,
    pub schedules: Vec<(String, i64)>,
    pub dispatches: Vec<(String, i64)>,
    /// Age (ms) of the oldest dispatch nobody has claimed yet.
    pub oldest_unclaimed_ms: Option<i64>,
    /// Age (ms) of the oldest acknowledged attempt its caller has not yet
    /// reported on (no failure, no success: the route is still at the
    /// dispatch's generation).
    pub oldest_unreported_ms: Option<i64>,
}

/// What a committed transition tells every server on the database
/// (PostgreSQL `NOTIFY`, sent inside the transaction so it is delivered
/// if and only if the commit happened): which event it wrote, the deadline
/// of the schedule it armed (the earliest, for a batch), and whether it
/// made a dispatch claimable, so each server wakes only the waiters
/// concerned: a timer loop only when the schedule is due before it would
/// wake anyway.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Announcement {
    pub event_id: i64,
    /// The armed schedule's deadline (UTC ms), if one was armed.
    pub schedule: Option<i64>,
    pub dispatch: bool,
}

impl Announcement {
    /// `<event id> <deadline ms|-> <d|->`: a short, fixed shape.
    pub fn payload(&self) -> String {
        let deadline = self
            .schedule
            .map_or_else(|| "-".to_string(), |d| d.to_string());
        let dispatch = if self.dispatch { 'd' } else { '-' };
        format!("{} {deadline} {dispatch}", self.event_id)
    }

    /// The inverse of [`Announcement::payload`]; `None` for anything else.
    /// Also reads the earlier `<event id> <s|-><d|->` shape (a server of
    /// the previous version on the same database during an upgrade): its
    /// schedule, with no deadline given, wakes every timer loop.
    pub fn parse(payload: &str) -> Option<Announcement> {
        if let Some((id, flags)) = payload.split_once(' ') {
            let earlier = match flags {
                "--" => Some((None, false)),
                "s-" => Some((Some(i64::MIN), false)),
                "-d" => Some((None, true)),
                "sd" => Some((Some(i64::MIN), true)),
                _ => None,
            };
            if let Some((schedule, dispatch)) = earlier {
                return Some(Announcement {
                    event_id: id.parse().ok()?,
                    schedule,
                    dispatch,
                });
            }
        }
        let mut parts = payload.split(' ');
        let event_id = parts.next()?.parse().ok()?;
        let schedule = match parts.next()? {
            "-" => None,
            d if d.starts_with(|c: char| c.is_ascii_digit() || c == '-') => Some(d.parse().ok()?),
            _ => return None,
        };
        let dispatch = match parts.next()? {
            "d" => true,
            "-" => false,
            _ => return None,
        };
        if parts.next().is_some() {
            return None;
        }
        Some(Announcement {
            event_id,
            schedule,
            dispatch,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Announcement;

    #[test]
    fn announcements_round_trip_and_reject_anything_else() {
        for schedule in [None, Some(0), Some(1_767_312_000_123), Some(-5)] {
            for dispatch in [false, true] {
                let a = Announcement {
                    event_id: 42,
                    schedule,
                    dispatch,
                };
                assert_eq!(Announcement::parse(&a.payload()), Some(a));
            }
        }
        for bad in [
            "", "42", "42 -", "x - -", "42 s -", "42 - x", "42 - d d", "42  - -", "42 1x -",
            "42 - -d", "x s-", "42 sx", "42 s-d",
        ] {
            assert_eq!(Announcement::parse(bad), None, "{bad:?}");
        }
        // The previous version's shape: a schedule without its deadline
        // wakes every timer loop.
        assert_eq!(
            Announcement::parse("42 sd"),
            Some(Announcement {
                event_id: 42,
                schedule: Some(i64::MIN),
                dispatch: true
            })
        );
        assert_eq!(
            Announcement::parse("7 --"),
            Some(Announcement {
                event_id: 7,
                schedule: None,
                dispatch: false
            })
        );
    }
}
