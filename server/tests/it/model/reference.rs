//! The reference model: one route as SPEC.md describes it, written from
//! SPEC.md and the README alone — the state table, the policy order, the
//! per-cycle budgets, the dispatch lease rule — small enough to check by
//! reading. It shares no code with the service's planner
//! (`server/src/routes/plan.rs`) or evaluator: where the two agree after
//! every step of thousands of random sequences, both are likely right.
//!
//! Shared circuits are an *input* here, not modelled: the harness reads the
//! stored circuits and answers, per candidate, until when another route's
//! circuit holds it back (`held`). SPEC.md: circuits decide *when*, the
//! policy decides *whether*.
//!
//! Times are milliseconds since the epoch, as the store keeps them.

use std::collections::{BTreeMap, BTreeSet};

/// SPEC.md's route states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Active,
    RetryWait,
    WaitingForReset,
    Retrying,
    Switching,
    ActionRequired,
}

impl State {
    pub fn name(self) -> &'static str {
        match self {
            State::Active => "active",
            State::RetryWait => "retry_wait",
            State::WaitingForReset => "waiting_for_reset",
            State::Retrying => "retrying",
            State::Switching => "switching",
            State::ActionRequired => "action_required",
        }
    }

    pub fn waiting(self) -> bool {
        matches!(self, State::RetryWait | State::WaitingForReset)
    }

    /// States a provider failure is evaluated in (switching: the switch's
    /// own attempt failed, as from `active`).
    pub fn failing(self) -> bool {
        matches!(self, State::Active | State::Retrying | State::Switching)
    }
}

/// The two configurable classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    Transient,
    Hard,
}

impl Class {
    pub fn name(self) -> &'static str {
        match self {
            Class::Transient => "transient",
            Class::Hard => "hard",
        }
    }
}

/// One class policy. `retries == 0`: retry disabled; `wait == 0`: reset
/// waiting disabled; `skip`: `on_exhausted` is skip, else stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pol {
    pub retries: u32,
    pub initial: u32,
    pub wait: u32,
    pub skip: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cand {
    pub id: String,
    pub transient: Pol,
    pub hard: Pol,
}

impl Cand {
    fn policy(&self, class: Class) -> Pol {
        match class {
            Class::Transient => self.transient,
            Class::Hard => self.hard,
        }
    }
}

/// What the classifier made of a failure, as far as policy goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Unknown, low-confidence or conflicting: stops automatic recovery.
    Unclassified,
    /// Not the provider's failure: its owner handles it.
    NotProvider,
    Provider(Class),
}

/// A failure report as the model sees it.
#[derive(Debug, Clone)]
pub struct Failure {
    /// Names the route's current generation, invocation and prompt generation.
    pub current: bool,
    pub verdict: Verdict,
    /// The validated reset or retry time, if any.
    pub reset_at: Option<i64>,
    /// Effects inside the evidence itself, or a failure at teardown.
    pub unsafe_evidence: bool,
    /// A resumable-retry claim naming this provider session at the route's
    /// current generation.
    pub resumable_session: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Retry,
    ResetWait,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Retry => "retry",
            Kind::ResetWait => "reset_wait",
        }
    }
}

/// The pending schedule as a route snapshot shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    pub kind: Kind,
    pub deadline: i64,
    pub ordinal: u32,
    pub max_retries: u32,
    pub skip_after: bool,
    pub class: Class,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchedStatus {
    Armed,
    Fired,
    Void,
}

impl SchedStatus {
    pub fn name(self) -> &'static str {
        match self {
            SchedStatus::Armed => "armed",
            SchedStatus::Fired => "fired",
            SchedStatus::Void => "void",
        }
    }
}

/// A schedule row: armed once, then fired or voided, never both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sched {
    pub generation: i64,
    pub kind: Kind,
    pub deadline: i64,
    pub status: SchedStatus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DReason {
    Retry,
    ResetRetry,
    Switch,
}

impl DReason {
    pub fn name(self) -> &'static str {
        match self {
            DReason::Retry => "retry",
            DReason::ResetRetry => "reset_retry",
            DReason::Switch => "switch",
        }
    }

    fn after(kind: Option<Kind>) -> DReason {
        match kind {
            Some(Kind::ResetWait) => DReason::ResetRetry,
            _ => DReason::Retry,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DStatus {
    Pending,
    Claimed { lease_until: i64 },
    Acked,
    Void,
}

impl DStatus {
    pub fn name(self) -> &'static str {
        match self {
            DStatus::Pending => "pending",
            DStatus::Claimed { .. } => "claimed",
            DStatus::Acked => "acked",
            DStatus::Void => "void",
        }
    }
}

/// A dispatch: "deliver the prompt at this generation", handed out once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disp {
    pub generation: i64,
    pub reason: DReason,
    pub status: DStatus,
}

/// One attempt row as the model expects it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptM {
    pub generation: i64,
    pub cycle: i64,
    pub candidate: String,
    pub decision: &'static str,
}

/// A manual action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Act {
    RetryNow,
    SkipNow,
    Cancel,
    Stop,
}

/// Why the service refuses a request (nothing changes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// 409 `stale_generation`: the caller's generation is not the route's.
    Stale,
    /// 409 `invalid_action`: the state table does not allow it now.
    Invalid,
}

/// Until when a candidate is held back by another route's circuit.
pub type Held<'a> = &'a dyn Fn(&str) -> Option<i64>;

#[derive(Debug, Clone)]
pub struct Model {
    pub profile: Vec<Cand>,
    pub state: State,
    pub generation: i64,
    pub cycle: i64,
    pub candidate: String,
    pub index: usize,
    pub prompt_generation: i64,
    /// Counts invocations: a new value means a new `invocation_id`.
    pub invocation: usize,
    pub effects: bool,
    pub session: Option<String>,
    pub excluded: Vec<String>,
    pub reset_used: BTreeSet<(String, Class)>,
    pub retries: BTreeMap<(String, Class), u32>,
    pub pending: Option<Pending>,
    pub reason: Option<&'static str>,
    pub schedules: Vec<Sched>,
    pub dispatches: Vec<Disp>,
    pub attempts: Vec<AttemptM>,
    /// Committed transitions, one event each.
    pub events: usize,
}

/// The longest retry delay, whatever the doubling says (24 h).
const MAX_DELAY_MS: i64 = 86_400_000;

impl Model {
    /// A new route: active on the first candidate, generation 1, cycle 1.
    pub fn open(profile: Vec<Cand>) -> Model {
        let candidate = profile[0].id.clone();
        Model {
            profile,
            state: State::Active,
            generation: 1,
            cycle: 1,
            candidate,
            index: 0,
            prompt_generation: 1,
            invocation: 0,
            effects: false,
            session: None,
            excluded: Vec::new(),
            reset_used: BTreeSet::new(),
            retries: BTreeMap::new(),
            pending: None,
            reason: None,
            schedules: Vec::new(),
            dispatches: Vec::new(),
            attempts: Vec::new(),
            events: 1,
        }
    }

    fn cand(&self, id: &str) -> Option<&Cand> {
        self.profile.iter().find(|c| c.id == id)
    }

    /// Every transition: a new generation, and whatever was armed or
    /// handed out for an older one is superseded.
    fn transition(&mut self) {
        self.generation += 1;
        self.events += 1;
        self.pending = None;
        self.reason = None;
        let g = self.generation;
        for s in &mut self.schedules {
            if s.status == SchedStatus::Armed && s.generation < g {
                s.status = SchedStatus::Void;
            }
        }
        for d in &mut self.dispatches {
            if matches!(d.status, DStatus::Pending | DStatus::Claimed { .. }) && d.generation < g {
                d.status = DStatus::Void;
            }
        }
    }

    fn stop(&mut self, reason: &'static str) {
        self.state = State::ActionRequired;
        self.reason = Some(reason);
    }

    fn new_invocation(&mut self) {
        self.invocation += 1;
        self.effects = false;
        self.session = None;
    }

    fn new_cycle(&mut self) {
        self.cycle += 1;
        self.excluded.clear();
        self.reset_used.clear();
        self.retries.clear();
    }

    fn move_to(&mut self, index: usize) {
        self.index = index;
        self.candidate = self.profile[index].id.clone();
        self.new_invocation();
    }

    fn dispatch(&mut self, reason: DReason) {
        self.dispatches.push(Disp {
            generation: self.generation,
            reason,
            status: DStatus::Pending,
        });
    }

    fn wait(&mut self, kind: Kind, deadline: i64, ordinal: u32, p: Pol, class: Class) {
        self.state = match kind {
            Kind::Retry => State::RetryWait,
            Kind::ResetWait => State::WaitingForReset,
        };
        self.pending = Some(Pending {
            kind,
            deadline,
            ordinal,
            max_retries: p.retries,
            skip_after: p.skip,
            class,
        });
        self.schedules.push(Sched {
            generation: self.generation,
            kind,
            deadline,
            status: SchedStatus::Armed,
        });
    }

    /// Skip: exclude the current candidate for this cycle and move to the
    /// next one in profile order (wrapping) that is neither excluded nor
    /// held by a circuit; none left stops for a person.
    fn switch(&mut self, held: Held) {
        if !self.excluded.contains(&self.candidate) {
            self.excluded.push(self.candidate.clone());
        }
        let n = self.profile.len();
        let start = self.profile.iter().position(|c| c.id == self.candidate);
        for offset in 1..=n {
            let i = match start {
                Some(s) => (s + offset) % n,
                None => offset - 1,
            };
            let c = &self.profile[i];
            if c.id != self.candidate && !self.excluded.contains(&c.id) && held(&c.id).is_none() {
                self.move_to(i);
                self.state = State::Switching;
                self.dispatch(DReason::Switch);
                return;
            }
        }
        self.stop("no_eligible_candidate");
    }

    /// A failure report; answers the decision's kind. SPEC.md's order:
    /// stale changes nothing; unclassified, not the provider's, and
    /// effect-unsafe stop; then a reset wait, then a retry, then
    /// `on_exhausted`.
    pub fn failure(&mut self, f: &Failure, now: i64, held: Held) -> &'static str {
        if !f.current || !self.state.failing() {
            return "stale";
        }
        let had_effects = self.effects || f.unsafe_evidence;
        let resumed = f.resumable_session.is_some() && f.resumable_session == self.session;
        let (cycle, candidate, generation) = (self.cycle, self.candidate.clone(), self.generation);
        self.transition();
        let decision = self.decide(f.verdict, had_effects && !resumed, f.reset_at, now, held);
        self.attempts.push(AttemptM {
            generation,
            cycle,
            candidate,
            decision,
        });
        decision
    }

    fn decide(
        &mut self,
        verdict: Verdict,
        effect_unsafe: bool,
        reset_at: Option<i64>,
        now: i64,
        held: Held,
    ) -> &'static str {
        let class = match verdict {
            Verdict::Unclassified => {
                self.stop("unclassified");
                return "unclassified";
            }
            Verdict::NotProvider => {
                self.stop("not_provider");
                return "not_provider";
            }
            Verdict::Provider(_) if effect_unsafe => {
                self.stop("effect_unsafe");
                return "effect_unsafe";
            }
            Verdict::Provider(c) => c,
        };
        let id = self.candidate.clone();
        let Some(p) = self.cand(&id).map(|c| c.policy(class)) else {
            self.stop("profile_changed");
            return "stop";
        };
        let hold = held(&id);
        let later = |t: i64| hold.map_or(t, |h| h.max(t));
        let key = (id.clone(), class);
        if p.wait > 0 && !self.reset_used.contains(&key) {
            if let Some(reset) = reset_at.filter(|r| *r > now && *r - now <= p.wait as i64 * 1000) {
                self.reset_used.insert(key);
                self.wait(Kind::ResetWait, later(reset), 0, p, class);
                return "wait_for_reset";
            }
        }
        let used = self.retries.get(&key).copied().unwrap_or(0);
        if p.retries > 0 && used < p.retries {
            let ordinal = used + 1;
            let delay = (p.initial as i64 * 1000)
                .saturating_mul(1 << (ordinal - 1).min(40))
                .min(MAX_DELAY_MS);
            self.retries.insert(key, ordinal);
            self.wait(Kind::Retry, later(now + delay), ordinal, p, class);
            return "retry";
        }
        if p.skip {
            self.switch(held);
            "skip"
        } else {
            self.stop("stopped_by_policy");
            "stop"
        }
    }

    /// Output or tool use. For the current invocation it taints the
    /// attempt; for an invocation that already failed and waits to be
    /// retried (`late`), replay is no longer safe: stop.
    pub fn effect(&mut self, late: bool, session: Option<String>) {
        if !late {
            self.effects = true;
            if session.is_some() {
                self.session = session;
            }
            self.events += 1;
        } else if self.state.waiting() {
            self.transition();
            self.stop("effect_after_failure");
        }
    }

    /// The current invocation succeeded: active, a new cycle and a new
    /// invocation (the next prompt).
    pub fn success(&mut self, current: bool) -> Result<(), Refused> {
        if !current {
            return Err(Refused::Stale);
        }
        if !self.state.failing() {
            return Err(Refused::Invalid);
        }
        // Success proves the claimed dispatch was delivered.
        let g = self.generation;
        for d in &mut self.dispatches {
            if d.generation == g && matches!(d.status, DStatus::Claimed { .. }) {
                d.status = DStatus::Acked;
            }
        }
        self.transition();
        self.state = State::Active;
        self.new_cycle();
        self.new_invocation();
        self.prompt_generation += 1;
        Ok(())
    }

    /// A manual action with the right generation (`right`) or a stale one.
    pub fn act(&mut self, act: Act, right: bool, held: Held) -> Result<(), Refused> {
        if matches!(act, Act::Cancel | Act::Stop) && self.state == State::ActionRequired {
            return Ok(());
        }
        if !right {
            return Err(Refused::Stale);
        }
        let kind = self.pending.as_ref().map(|p| p.kind);
        match (
            self.state.waiting(),
            self.state == State::ActionRequired,
            act,
        ) {
            (true, _, Act::RetryNow) => {
                self.transition();
                self.new_invocation();
                self.state = State::Retrying;
                self.dispatch(DReason::after(kind));
            }
            (true, _, Act::SkipNow) => {
                self.transition();
                self.switch(held);
            }
            (true, _, Act::Cancel) => {
                self.transition();
                self.stop("cancelled_by_user");
            }
            (true, _, Act::Stop) => {
                self.transition();
                self.stop("stopped_by_user");
            }
            // From a stop, retry and skip start a new route cycle.
            (_, true, Act::RetryNow) => {
                self.transition();
                self.new_cycle();
                let i = self
                    .profile
                    .iter()
                    .position(|c| c.id == self.candidate)
                    .unwrap_or(0);
                self.move_to(i);
                self.state = State::Retrying;
                self.dispatch(DReason::Retry);
            }
            (_, true, Act::SkipNow) => {
                self.transition();
                self.new_cycle();
                self.switch(held);
            }
            _ => return Err(Refused::Invalid),
        }
        Ok(())
    }

    /// Claims the route's pending dispatch with a lease; answers whether
    /// there was one.
    pub fn claim(&mut self, lease_ms: i64, now: i64) -> Option<usize> {
        let i = self
            .dispatches
            .iter()
            .position(|d| d.status == DStatus::Pending)?;
        self.dispatches[i].status = DStatus::Claimed {
            lease_until: now + lease_ms,
        };
        Some(i)
    }

    /// Acknowledges dispatch `i`, naming generation `sent`.
    pub fn ack(&mut self, i: usize, sent: i64) -> Result<(), Refused> {
        let d = self.dispatches[i].clone();
        if d.status == DStatus::Acked && sent == d.generation {
            return Ok(());
        }
        if sent != d.generation || self.generation != d.generation {
            return Err(Refused::Stale);
        }
        if !matches!(d.status, DStatus::Claimed { .. }) {
            return Err(Refused::Invalid);
        }
        self.dispatches[i].status = DStatus::Acked;
        self.events += 1;
        if d.reason == DReason::Switch && self.state == State::Switching {
            self.state = State::Active;
        }
        Ok(())
    }

    /// Due schedules fire (deadline reached, generation current): the
    /// attempt is dispatched, unless a circuit still holds the candidate —
    /// then the wait moves to the circuit's deadline, visibly.
    pub fn fire(&mut self, now: i64, held: Held) {
        let Some(p) = self.pending.clone().filter(|p| p.deadline <= now) else {
            return;
        };
        if !self.state.waiting() {
            return;
        }
        for s in &mut self.schedules {
            if s.status == SchedStatus::Armed {
                s.status = SchedStatus::Fired;
            }
        }
        let hold = held(&self.candidate.clone());
        let state = self.state;
        self.transition();
        match hold {
            Some(until) => {
                self.state = state;
                self.pending = Some(Pending {
                    deadline: until,
                    ..p.clone()
                });
                self.schedules.push(Sched {
                    generation: self.generation,
                    kind: p.kind,
                    deadline: until,
                    status: SchedStatus::Armed,
                });
            }
            None => {
                self.new_invocation();
                self.state = State::Retrying;
                self.dispatch(DReason::after(Some(p.kind)));
            }
        }
    }

    /// A claimed dispatch whose lease ran out unacknowledged is ambiguous:
    /// the route stops for a person and nothing is re-sent.
    pub fn expire_leases(&mut self, now: i64) {
        let g = self.generation;
        let expired = self.dispatches.iter().any(|d| {
            d.generation == g
                && matches!(d.status, DStatus::Claimed { lease_until } if lease_until < now)
        });
        if expired && matches!(self.state, State::Retrying | State::Switching) {
            self.transition();
            self.stop("ambiguous_dispatch");
        }
    }
}

/// SPEC.md's state table, the three steps it leaves implicit (switching
/// ends at the switch's acknowledgement or success; a stop can restart with
/// retry or skip; an unacknowledged dispatch whose lease ran out stops),
/// and the moves that change no state (an effect counted, a wait moved by
/// a circuit, a dispatch acknowledged): the only `(from, event kind, to)`
/// an event may record.
pub fn allowed(from: &str, kind: &str, to: &str) -> bool {
    let failing = matches!(from, "active" | "retrying" | "switching");
    let waiting = matches!(from, "retry_wait" | "waiting_for_reset");
    match kind {
        "route.failure" => {
            failing
                && matches!(
                    to,
                    "waiting_for_reset" | "retry_wait" | "switching" | "action_required"
                )
        }
        "route.fired" => waiting && to == "retrying",
        "route.held" => waiting && to == from,
        "route.action" => {
            (waiting && matches!(to, "retrying" | "switching" | "action_required"))
                || (from == "action_required"
                    && matches!(to, "retrying" | "switching" | "action_required"))
        }
        "route.success" => failing && to == "active",
        "route.dispatch_acked" => {
            (from == "switching" && to == "active") || (from == to && from == "retrying")
        }
        "route.ambiguous" => matches!(from, "retrying" | "switching") && to == "action_required",
        // Counted, or (after a failure, while waiting) a stop.
        "route.effect" => from == to || (waiting && to == "action_required"),
        _ => false,
    }
}

/// Event kinds that change nothing the fence protects: the generation stays.
pub fn keeps_generation(kind: &str, from: &str, to: &str) -> bool {
    kind == "route.dispatch_acked" || (kind == "route.effect" && from == to)
}
