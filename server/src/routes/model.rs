//! The typed route the service works with, and its conversion to and from
//! the stored rows and the wire types. Stored rows are parsed here, once:
//! a value that does not parse is a corrupt row and answers an error,
//! never a default.

use crate::store::{AttemptRow, DispatchRow, RouteRow};
use chrono::{DateTime, Utc};
use domain::ids::{Generation, ProfileId, RouteId};
use domain::policy::PolicyClass;
use domain::profile::Candidate;
use domain::route::{
    Attempt, Caller, CallerKind, CandidateRef, Dispatch, DispatchReason, DispatchState,
    LastFailure, Pending, Resume, RouteSnapshot, RouteState, StopReason,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::clock::from_ms;

/// Per-cycle bookkeeping: what the current route cycle has used up.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Memory {
    /// Candidates skipped in this cycle.
    pub excluded: Vec<String>,
    /// `candidate/class` pairs that already waited for a reset this cycle.
    pub reset_used: Vec<String>,
    /// Retries used per `candidate/class` this cycle.
    pub retries: BTreeMap<String, u32>,
}

impl Memory {
    pub fn key(candidate_id: &str, class: PolicyClass) -> String {
        format!("{candidate_id}/{class}")
    }

    pub fn usage(&self, candidate_id: &str, class: PolicyClass) -> crate::recovery::Usage {
        let key = Memory::key(candidate_id, class);
        crate::recovery::Usage {
            retries_used: self.retries.get(&key).copied().unwrap_or(0),
            reset_used: self.reset_used.contains(&key),
        }
    }
}

/// What an attempt row says beyond its columns, kept as one JSON column
/// (`attempts.detail`): why a decision was unsafe, the circuit whose hold
/// decided, the kind of a late effect. Absent on rows stored before it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AttemptDetail {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsafe_reason: Option<domain::route::UnsafeReason>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_by: Option<domain::circuit::CircuitHold>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late_effect: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub returned: Option<domain::route::Returned>,
}

impl AttemptDetail {
    /// The column's text: `None` when there is nothing to say.
    pub fn to_column(&self) -> Option<String> {
        (*self != AttemptDetail::default()).then(|| json(self))
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    pub id: RouteId,
    pub profile_id: ProfileId,
    pub caller: Caller,
    pub state: RouteState,
    pub generation: Generation,
    pub cycle: i64,
    pub candidate: CandidateRef,
    pub invocation_id: String,
    pub prompt_generation: i64,
    pub effects: i64,
    pub provider_session_id: Option<String>,
    pub memory: Memory,
    pub pending: Option<Pending>,
    pub last_failure: Option<LastFailure>,
    pub reason: Option<StopReason>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

fn json<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).expect("route parts always serialise")
}

fn parse<T: for<'de> Deserialize<'de>>(what: &str, text: &str) -> Result<T, String> {
    serde_json::from_str(text).map_err(|e| format!("stored route {what} is corrupt: {e}"))
}

/// A stored name (a state, a reason, a class) read back as its type.
fn named<T: std::str::FromStr>(what: &str, id: &str, text: &str) -> Result<T, String> {
    text.parse()
        .map_err(|_| format!("stored {what} `{text}` of {id} is unknown"))
}

fn candidate_ref(index: i64, id: &str, label: &str) -> CandidateRef {
    CandidateRef {
        index: index.max(0) as usize,
        id: id.to_string(),
        label: label.to_string(),
    }
}

impl Route {
    /// A new route: active on `first` (the profile's first candidate), at
    /// generation 1 of cycle 1, with a fresh invocation.
    pub fn open(
        profile_id: ProfileId,
        caller: Caller,
        first: &Candidate,
        now: DateTime<Utc>,
    ) -> Route {
        let mut route = Route {
            id: RouteId(new_id("r")),
            profile_id,
            caller,
            state: RouteState::Active,
            generation: Generation::FIRST,
            cycle: 1,
            candidate: CandidateRef::default(),
            invocation_id: String::new(),
            prompt_generation: 1,
            effects: 0,
            provider_session_id: None,
            memory: Memory::default(),
            pending: None,
            last_failure: None,
            reason: None,
            created_at: now,
            updated_at: now,
        };
        route.move_to(0, first);
        route
    }

    pub fn from_row(r: RouteRow) -> Result<Route, String> {
        Ok(Route {
            caller: Caller {
                kind: CallerKind::parse(&r.caller_kind).ok_or("stored caller kind is unknown")?,
                reference: r.caller_ref,
            },
            state: RouteState::parse(&r.state).ok_or("stored route state is unknown")?,
            generation: Generation(r.generation),
            cycle: r.cycle,
            candidate: candidate_ref(r.candidate_index, &r.candidate_id, &r.candidate_label),
            invocation_id: r.invocation_id,
            prompt_generation: r.prompt_generation,
            effects: r.effects,
            provider_session_id: r.provider_session_id,
            memory: parse("memory", &r.memory)?,
            pending: r
                .pending
                .as_deref()
                .map(|p| parse("pending", p))
                .transpose()?,
            last_failure: r
                .last_failure
                .as_deref()
                .map(|p| parse("last failure", p))
                .transpose()?,
            reason: r.reason.map(StopReason::from),
            created_at: from_ms(r.created_at),
            updated_at: from_ms(r.updated_at),
            id: RouteId(r.id),
            profile_id: ProfileId(r.profile_id),
        })
    }

    pub fn to_row(&self) -> RouteRow {
        RouteRow {
            id: self.id.to_string(),
            profile_id: self.profile_id.to_string(),
            caller_kind: self.caller.kind.as_str().into(),
            caller_ref: self.caller.reference.clone(),
            state: self.state.as_str().into(),
            generation: self.generation.get(),
            cycle: self.cycle,
            candidate_index: self.candidate.index as i64,
            candidate_id: self.candidate.id.clone(),
            candidate_label: self.candidate.label.clone(),
            invocation_id: self.invocation_id.clone(),
            prompt_generation: self.prompt_generation,
            effects: self.effects,
            provider_session_id: self.provider_session_id.clone(),
            memory: json(&self.memory),
            pending: self.pending.as_ref().map(json),
            last_failure: self.last_failure.as_ref().map(json),
            reason: self.reason.as_ref().map(StopReason::to_string),
            created_at: self.created_at.timestamp_millis(),
            updated_at: self.updated_at.timestamp_millis(),
        }
    }

    pub fn snapshot(&self, server_time: DateTime<Utc>) -> RouteSnapshot {
        RouteSnapshot {
            id: self.id.clone(),
            profile_id: self.profile_id.clone(),
            caller: self.caller.clone(),
            state: self.state,
            generation: self.generation,
            cycle: self.cycle,
            candidate: self.candidate.clone(),
            invocation_id: self.invocation_id.clone(),
            prompt_generation: self.prompt_generation,
            pending: self.pending.clone(),
            last_failure: self.last_failure.clone(),
            reason: self.reason.clone(),
            excluded: self.memory.excluded.clone(),
            updated_at: self.updated_at,
            server_time,
        }
    }

    /// Points the route at `candidate` with a fresh invocation.
    pub fn move_to(&mut self, index: usize, candidate: &Candidate) {
        self.candidate = CandidateRef {
            index,
            id: candidate.id.clone(),
            label: candidate.label.clone(),
        };
        self.new_invocation();
    }

    /// A fresh invocation id for the next prompt delivery; effects seen on
    /// the previous one no longer count.
    pub fn new_invocation(&mut self) {
        self.invocation_id = new_invocation_id(self.caller.kind);
        self.effects = 0;
        self.provider_session_id = None;
    }

    /// A new route cycle: exclusions, reset waits and retry budgets reset.
    pub fn new_cycle(&mut self) {
        self.cycle += 1;
        self.memory = Memory::default();
    }

    /// A dispatch telling the caller to deliver the prompt now.
    pub fn dispatch(&self, reason: DispatchReason, now: DateTime<Utc>) -> DispatchRow {
        DispatchRow {
            id: new_id("d"),
            route_id: self.id.to_string(),
            generation: self.generation.get(),
            invocation_id: self.invocation_id.clone(),
            prompt_generation: self.prompt_generation,
            candidate_index: self.candidate.index as i64,
            candidate_id: self.candidate.id.clone(),
            candidate_label: self.candidate.label.clone(),
            caller_kind: self.caller.kind.as_str().into(),
            reason: reason.as_str().into(),
            state: DispatchState::Pending.to_string(),
            lease_until: None,
            created_at: now.timestamp_millis(),
            claimed_at: None,
            acked_at: None,
            resume: None,
        }
    }
}

impl DispatchRow {
    /// The dispatch tells its caller to resume `resume`'s provider session
    /// rather than send the prompt again.
    pub fn resuming(mut self, resume: Option<&Resume>) -> DispatchRow {
        self.resume = resume.map(json);
        self
    }
}

pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", uuid::Uuid::new_v4().simple())
}

/// Utility calls get a routing invocation id of their own kind, so their
/// reports can never be confused with an interactive session's.
pub fn new_invocation_id(kind: CallerKind) -> String {
    new_id(match kind {
        CallerKind::Utility => "utility",
        _ => "inv",
    })
}

/// A dispatch row's state.
pub fn dispatch_state(d: &DispatchRow) -> Result<DispatchState, String> {
    named("dispatch state", &d.id, &d.state)
}

pub fn dispatch_to_wire(d: &DispatchRow) -> Result<Dispatch, String> {
    Ok(Dispatch {
        id: d.id.clone(),
        route_id: RouteId(d.route_id.clone()),
        generation: Generation(d.generation),
        invocation_id: d.invocation_id.clone(),
        prompt_generation: d.prompt_generation,
        candidate: candidate_ref(d.candidate_index, &d.candidate_id, &d.candidate_label),
        reason: named("dispatch reason", &d.id, &d.reason)?,
        lease_until: d.lease_until.map(from_ms),
        resume: d
            .resume
            .as_deref()
            .map(|r| parse(&format!("resume of dispatch {}", d.id), r))
            .transpose()?,
    })
}

pub fn attempt_to_wire(a: &AttemptRow) -> Result<Attempt, String> {
    let id = format!("attempt {} of route {}", a.seq, a.route_id);
    let detail: AttemptDetail = a
        .detail
        .as_deref()
        .map(|d| parse(&format!("detail of {id}"), d))
        .transpose()?
        .unwrap_or_default();
    Ok(Attempt {
        seq: a.seq,
        generation: Generation(a.generation),
        cycle: a.cycle,
        candidate: candidate_ref(a.candidate_index, &a.candidate_id, &a.candidate_label),
        invocation_id: a.invocation_id.clone(),
        code: a.code.clone(),
        class: named("class", &id, &a.class)?,
        catalogue_version: a.catalogue_version.clone(),
        classifier_rule: a.classifier_rule.clone(),
        safe_excerpt: a.safe_excerpt.clone(),
        http_status: a.http_status.and_then(|s| u16::try_from(s).ok()),
        policy: serde_json::from_str(&a.policy)
            .map_err(|e| format!("stored policy of {id} is corrupt: {e}"))?,
        decision: named("decision", &id, &a.decision)?,
        retry_ordinal: a.retry_ordinal.max(0) as u32,
        deadline: a.deadline.map(from_ms),
        outcome: named("outcome", &id, &a.outcome)?,
        created_at: from_ms(a.created_at),
        classification: a
            .classification
            .as_deref()
            .map(serde_json::from_str)
            .transpose()
            .map_err(|e| format!("stored classification of {id} is corrupt: {e}"))?,
        unsafe_reason: detail.unsafe_reason,
        held_by: detail.held_by,
        late_effect: detail.late_effect,
        returned: detail.returned,
    })
}
