//! The reference model: one route as docs/design.md describes it, written
//! from docs/design.md and docs/routes.md alone — the state table, the policy order, the
//! per-cycle budgets, the dispatch lease rule — small enough to check by
//! reading. It shares no code with the service's planner
//! (`server/src/routes/plan.rs`) or evaluator: where the two agree after
//! every step of thousands of random sequences, both are likely right.
//!
//! The safety rules of issue 36 are re-derived here in the model's own
//! words: the failure boundary (`phase`) and effect evidence gate automatic
//! recovery, a resume may retry or wait but never switch, the policy
//! bounds every wait a circuit would impose, a skip waits for a held
//! candidate (within the deployment's bound), stop and cancel work from
//! every state, a late effect withdraws an undelivered successor (or is
//! recorded), and a dispatch nobody claims in time stops its route.
//!
//! Shared circuits are an *input* here, not modelled: the harness reads the
//! stored circuits and answers, per candidate, until when another route's
//! circuit holds it back (`held`). docs/design.md: circuits decide *when*, the
//! policy decides *whether*.
//!
//! Times are milliseconds since the epoch, as the store keeps them.

use std::collections::{BTreeMap, BTreeSet};

/// The route states of docs/design.md.
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

/// The classification's class, as a route's last failure keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrClass {
    Transient,
    Hard,
    NotProvider,
    Unclassified,
}

impl ErrClass {
    pub fn name(self) -> &'static str {
        match self {
            ErrClass::Transient => "transient",
            ErrClass::Hard => "hard",
            ErrClass::NotProvider => "not_provider",
            ErrClass::Unclassified => "unclassified",
        }
    }

    pub fn from_name(name: &str) -> Option<ErrClass> {
        [
            ErrClass::Transient,
            ErrClass::Hard,
            ErrClass::NotProvider,
            ErrClass::Unclassified,
        ]
        .into_iter()
        .find(|c| c.name() == name)
    }

    /// The configurable class a policy has for it, if any.
    fn policy_class(self) -> Option<Class> {
        match self {
            ErrClass::Transient => Some(Class::Transient),
            ErrClass::Hard => Some(Class::Hard),
            ErrClass::NotProvider | ErrClass::Unclassified => None,
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

/// Where in an invocation's life a failure happened (the envelope's `phase`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Launch,
    SessionInit,
    Prompt,
    Stream,
    Teardown,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Launch => "launch",
            Phase::SessionInit => "session_init",
            Phase::Prompt => "prompt",
            Phase::Stream => "stream",
            Phase::Teardown => "teardown",
        }
    }

    pub fn from_name(name: &str) -> Option<Phase> {
        [
            Phase::Launch,
            Phase::SessionInit,
            Phase::Prompt,
            Phase::Stream,
            Phase::Teardown,
        ]
        .into_iter()
        .find(|p| p.name() == name)
    }
}

/// Why a failure is not known to be safe to recover from automatically:
/// the first that holds of reported effects, effects in the evidence, and
/// a phase that is missing or past the boundary (`launch`, `session_init`
/// and `prompt` are before any result).
fn unsafe_reason(reported: bool, in_evidence: bool, phase: Option<Phase>) -> Option<&'static str> {
    if reported {
        return Some("effects_reported");
    }
    if in_evidence {
        return Some("effects_in_evidence");
    }
    match phase {
        Some(Phase::Launch | Phase::SessionInit | Phase::Prompt) => None,
        Some(Phase::Stream) => Some("output_started"),
        Some(Phase::Teardown) => Some("at_teardown"),
        None => Some("boundary_unknown"),
    }
}

/// A resume claim in a failure report (`resumable`): the provider-native
/// session and the provider-side turn it resumes, each possibly missing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resume {
    pub session: Option<String>,
    pub turn: Option<i64>,
}

/// A failure report as the model sees it.
#[derive(Debug, Clone)]
pub struct Failure {
    /// Names the route's current generation, invocation and prompt generation.
    pub current: bool,
    pub verdict: Verdict,
    /// The classification's class (what the route's last failure keeps).
    pub class: ErrClass,
    /// The validated reset or retry time, if any.
    pub reset_at: Option<i64>,
    /// Output or tool activity inside the evidence itself.
    pub effect_items: bool,
    pub phase: Option<Phase>,
    pub resume: Option<Resume>,
}

/// What the effect gate lets through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Gate {
    /// Before any result, no effects: the policy acts.
    Safe,
    /// Past the boundary, but the provider resumes the very session the
    /// effects were reported under: the policy may retry or wait on the
    /// same candidate, never switch.
    Resumable,
    Unsafe(&'static str),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Retry,
    ResetWait,
    /// A switch waiting for its (held) candidate's circuit.
    Switch,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Retry => "retry",
            Kind::ResetWait => "reset_wait",
            Kind::Switch => "switch",
        }
    }
}

/// The pending wait as a route snapshot shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    pub kind: Kind,
    pub deadline: i64,
    pub ordinal: u32,
    pub max_retries: u32,
    pub skip_after: bool,
    pub class: ErrClass,
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
            Some(Kind::Switch) => DReason::Switch,
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

    fn open(self) -> bool {
        matches!(self, DStatus::Pending | DStatus::Claimed { .. })
    }
}

/// A dispatch: "deliver the prompt at this generation", handed out once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disp {
    pub generation: i64,
    pub reason: DReason,
    pub status: DStatus,
    /// The invocation it delivers.
    pub invocation: usize,
    /// When it was made (ms): unclaimed for too long, it stops the route.
    pub created: i64,
}

/// One attempt row as the model expects it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptM {
    pub generation: i64,
    pub cycle: i64,
    pub candidate: String,
    /// The invocation that failed (for a late effect: the one it belongs to).
    pub invocation: usize,
    pub decision: &'static str,
    pub unsafe_reason: Option<&'static str>,
    /// Until when the circuit whose hold outlasted the policy's bound held
    /// the candidate, when that decided.
    pub held_by: Option<i64>,
    /// The gate let a resume through (not stored: for the coverage count).
    pub resumed: bool,
}

/// What a route snapshot's `last_failure` says, as far as the model goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastFailure {
    pub class: ErrClass,
    pub unsafe_reason: Option<&'static str>,
    /// Until when the hold that decided (or, when every candidate was held
    /// too long, the hold that ends first) held.
    pub held_by: Option<i64>,
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
    pub last_failure: Option<LastFailure>,
    pub schedules: Vec<Sched>,
    pub dispatches: Vec<Disp>,
    pub attempts: Vec<AttemptM>,
    /// Committed transitions, one event each.
    pub events: usize,
}

/// The longest retry delay, whatever the doubling says (24 h).
const MAX_DELAY_MS: i64 = 86_400_000;
/// How long a switch waits for a held candidate (`--max-hold-wait`'s
/// default, 900 s); a longer hold stops the route.
pub const MAX_HOLD_WAIT_MS: i64 = 900_000;
/// A dispatch nobody claims within this stops its route
/// (`--dispatch-timeout`'s default, 1800 s).
pub const DISPATCH_TIMEOUT_MS: i64 = 1_800_000;

/// Retry `ordinal`'s delay: the initial interval, doubled per retry, capped.
fn retry_delay(initial: u32, ordinal: u32) -> i64 {
    (initial as i64 * 1000)
        .saturating_mul(1 << (ordinal.max(1) - 1).min(40))
        .min(MAX_DELAY_MS)
}

/// The default class policy (a class no policy configures): no retries,
/// no reset waiting, skip.
const NO_POLICY: Pol = Pol {
    retries: 0,
    initial: 0,
    wait: 0,
    skip: true,
};

/// What a decision records besides its kind.
struct Decided {
    kind: &'static str,
    unsafe_reason: Option<&'static str>,
    by_hold: Option<i64>,
}

impl Decided {
    fn plain(kind: &'static str) -> Decided {
        Decided {
            kind,
            unsafe_reason: None,
            by_hold: None,
        }
    }
}

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
            last_failure: None,
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
            if d.status.open() && d.generation < g {
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

    fn dispatch(&mut self, reason: DReason, now: i64) {
        self.dispatches.push(Disp {
            generation: self.generation,
            reason,
            status: DStatus::Pending,
            invocation: self.invocation,
            created: now,
        });
    }

    /// The route waits: for a retry, a reset, or a held switch's candidate.
    fn wait(&mut self, kind: Kind, deadline: i64, ordinal: u32, p: Pol, class: ErrClass) {
        self.state = match kind {
            Kind::Retry => State::RetryWait,
            Kind::ResetWait => State::WaitingForReset,
            Kind::Switch => State::Switching,
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
    /// held by a circuit. When every one left is held, wait on the one
    /// whose hold ends first (the earlier in the profile among equals) —
    /// if it ends within the deployment's bound; beyond it, stop. None
    /// left at all stops too. `class`: what failed, for the policy the
    /// held switch shows will follow.
    fn switch(&mut self, held: Held, class: ErrClass, now: i64) {
        if !self.excluded.contains(&self.candidate) {
            self.excluded.push(self.candidate.clone());
        }
        let n = self.profile.len();
        let start = self.profile.iter().position(|c| c.id == self.candidate);
        let left = |m: &Model, i: usize| {
            let c = &m.profile[i];
            c.id != m.candidate && !m.excluded.contains(&c.id)
        };
        for offset in 1..=n {
            let i = match start {
                Some(s) => (s + offset) % n,
                None => offset - 1,
            };
            if left(self, i) && held(&self.profile[i].id).is_none() {
                self.move_to(i);
                self.state = State::Switching;
                self.dispatch(DReason::Switch, now);
                return;
            }
        }
        let first = (0..n)
            .filter(|i| left(self, *i))
            .filter_map(|i| held(&self.profile[i].id).map(|until| (until, i)))
            .min();
        match first {
            None => self.stop("no_eligible_candidate"),
            Some((until, _)) if until - now > MAX_HOLD_WAIT_MS => {
                self.stop("all_candidates_held");
                if let Some(f) = &mut self.last_failure {
                    f.held_by = Some(until);
                }
            }
            Some((until, i)) => {
                self.move_to(i);
                let p = class
                    .policy_class()
                    .map_or(NO_POLICY, |c| self.profile[i].policy(c));
                self.wait(Kind::Switch, until, 0, p, class);
            }
        }
    }

    /// A failure report; answers the decision's kind. The policy order:
    /// stale changes nothing; unclassified, not the provider's, and
    /// effect-unsafe stop; then a reset wait, then a retry, then
    /// `on_exhausted` — each wait bounded by the policy against a circuit.
    pub fn failure(&mut self, f: &Failure, now: i64, held: Held) -> &'static str {
        if !f.current || !self.state.failing() {
            return "stale";
        }
        let gate = match unsafe_reason(self.effects, f.effect_items, f.phase) {
            None => Gate::Safe,
            // A resume names a turn and the session the effects were
            // reported under, in a report that says where it failed.
            Some(_)
                if f.phase.is_some()
                    && f.resume.as_ref().is_some_and(|r| {
                        r.turn.is_some() && r.session.is_some() && r.session == self.session
                    }) =>
            {
                Gate::Resumable
            }
            Some(reason) => Gate::Unsafe(reason),
        };
        let (cycle, candidate, generation, invocation) = (
            self.cycle,
            self.candidate.clone(),
            self.generation,
            self.invocation,
        );
        self.transition();
        self.last_failure = Some(LastFailure {
            class: f.class,
            unsafe_reason: None,
            held_by: None,
        });
        let d = self.decide(f, gate, now, held);
        if let Some(last) = &mut self.last_failure {
            last.unsafe_reason = d.unsafe_reason;
        }
        self.attempts.push(AttemptM {
            generation,
            cycle,
            candidate,
            invocation,
            decision: d.kind,
            unsafe_reason: d.unsafe_reason,
            held_by: d.by_hold,
            resumed: gate == Gate::Resumable,
        });
        d.kind
    }

    fn decide(&mut self, f: &Failure, gate: Gate, now: i64, held: Held) -> Decided {
        let class = match f.verdict {
            Verdict::Unclassified => {
                self.stop("unclassified");
                return Decided::plain("unclassified");
            }
            Verdict::NotProvider => {
                self.stop("not_provider");
                return Decided::plain("not_provider");
            }
            Verdict::Provider(c) => c,
        };
        if let Gate::Unsafe(reason) = gate {
            self.stop("effect_unsafe");
            return Decided {
                unsafe_reason: Some(reason),
                ..Decided::plain("effect_unsafe")
            };
        }
        let id = self.candidate.clone();
        // A candidate the profile lost has no policy to authorise anything:
        // stop for the profile. (A resume too: no policy says skip, so the
        // resume rule has nothing to refuse.)
        let Some(p) = self.cand(&id).map(|c| c.policy(class)) else {
            self.stop("profile_changed");
            return Decided::plain("stop");
        };
        let hold = held(&id);
        // A hold beyond `bound` outlasts what the policy waits: the
        // exhausted outcome at once, the budget left unspent.
        let beyond = |bound: i64| hold.filter(|h| *h > bound);
        let later = |t: i64| hold.map_or(t, |h| h.max(t));
        let key = (id.clone(), class);
        if p.wait > 0 && !self.reset_used.contains(&key) {
            let max = now + p.wait as i64 * 1000;
            if let Some(reset) = f.reset_at.filter(|r| *r > now && *r <= max) {
                if let Some(h) = beyond(max) {
                    return self.exhausted(p, gate, Some(h), f.class, now, held);
                }
                self.reset_used.insert(key);
                self.wait(Kind::ResetWait, later(reset), 0, p, f.class);
                return Decided::plain("wait_for_reset");
            }
        }
        let used = self.retries.get(&key).copied().unwrap_or(0);
        if p.retries > 0 && used < p.retries {
            let ordinal = used + 1;
            let left: i64 = (ordinal..=p.retries)
                .map(|i| retry_delay(p.initial, i))
                .fold(0, i64::saturating_add);
            if let Some(h) = beyond(now + left) {
                return self.exhausted(p, gate, Some(h), f.class, now, held);
            }
            self.retries.insert(key, ordinal);
            let at = later(now + retry_delay(p.initial, ordinal));
            self.wait(Kind::Retry, at, ordinal, p, f.class);
            return Decided::plain("retry");
        }
        self.exhausted(p, gate, None, f.class, now, held)
    }

    /// `on_exhausted` (`by_hold`: a circuit's hold decided it). A resumed
    /// session cannot move to another candidate: its skip is unsafe.
    fn exhausted(
        &mut self,
        p: Pol,
        gate: Gate,
        by_hold: Option<i64>,
        class: ErrClass,
        now: i64,
        held: Held,
    ) -> Decided {
        if !p.skip {
            self.stop("stopped_by_policy");
            if let Some(last) = &mut self.last_failure {
                last.held_by = by_hold;
            }
            return Decided {
                by_hold,
                ..Decided::plain("stop")
            };
        }
        if gate == Gate::Resumable {
            self.stop("effect_unsafe");
            return Decided {
                unsafe_reason: Some("resume_needs_same_candidate"),
                ..Decided::plain("effect_unsafe")
            };
        }
        if let Some(last) = &mut self.last_failure {
            last.held_by = by_hold;
        }
        self.switch(held, class, now);
        Decided {
            by_hold,
            ..Decided::plain("skip")
        }
    }

    /// Output or tool activity reported for (generation, invocation,
    /// prompt generation); `invocation` is `None` for one the route never
    /// had. For the current invocation it taints the attempt. For an
    /// earlier one whose failure authorised automatic recovery it is a
    /// late effect: a successor not yet delivered is withdrawn and the
    /// route stops for a person; a delivered one is recorded. Anything
    /// else changes nothing.
    pub fn effect(
        &mut self,
        generation: i64,
        invocation: Option<usize>,
        prompt_generation: i64,
        session: Option<String>,
    ) {
        let current = generation == self.generation
            && invocation == Some(self.invocation)
            && prompt_generation == self.prompt_generation;
        if current {
            self.effects = true;
            if session.is_some() {
                self.session = session;
            }
            self.events += 1;
            return;
        }
        let Some(failed) = self
            .attempts
            .iter()
            .rev()
            .find(|a| Some(a.invocation) == invocation)
        else {
            return;
        };
        if !matches!(failed.decision, "retry" | "wait_for_reset" | "skip") {
            return;
        }
        let row = AttemptM {
            generation: self.generation,
            cycle: self.cycle,
            candidate: failed.candidate.clone(),
            invocation: failed.invocation,
            decision: "late_effect",
            unsafe_reason: None,
            held_by: None,
            resumed: false,
        };
        let g = self.generation;
        let outstanding = self.pending.is_some()
            || (matches!(self.state, State::Retrying | State::Switching)
                && self
                    .dispatches
                    .iter()
                    .any(|d| d.generation == g && d.status.open()));
        if outstanding {
            self.transition();
            self.stop("effect_after_failure");
        } else {
            self.events += 1;
        }
        self.attempts.push(row);
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
    /// Stop and cancel work from every state (a stopped route answers them
    /// as done); retry and skip only while waiting or stopped.
    pub fn act(&mut self, act: Act, right: bool, now: i64, held: Held) -> Result<(), Refused> {
        let stopped = self.state == State::ActionRequired;
        if matches!(act, Act::Cancel | Act::Stop) && stopped {
            return Ok(());
        }
        if !right {
            return Err(Refused::Stale);
        }
        let kind = self.pending.as_ref().map(|p| p.kind);
        // The class a held switch's pending shows: the last failure's.
        let class = self
            .last_failure
            .as_ref()
            .map_or(ErrClass::Transient, |f| f.class);
        match (self.state.waiting(), stopped, act) {
            (_, _, Act::Cancel) => {
                self.transition();
                self.stop("cancelled_by_user");
            }
            (_, _, Act::Stop) => {
                self.transition();
                self.stop("stopped_by_user");
            }
            (true, _, Act::RetryNow) => {
                self.transition();
                self.new_invocation();
                self.state = State::Retrying;
                self.dispatch(DReason::after(kind), now);
            }
            (true, _, Act::SkipNow) => {
                self.transition();
                self.switch(held, class, now);
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
                self.dispatch(DReason::Retry, now);
            }
            (_, true, Act::SkipNow) => {
                self.transition();
                self.new_cycle();
                self.switch(held, class, now);
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

    /// The due wait fires (deadline reached, generation current): the
    /// attempt (or the held switch) is dispatched, unless a circuit still
    /// holds the candidate — then the wait moves to the circuit's
    /// deadline, visibly.
    pub fn fire(&mut self, now: i64, held: Held) {
        let Some(p) = self.pending.clone().filter(|p| p.deadline <= now) else {
            return;
        };
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
                self.state = match p.kind {
                    Kind::Switch => State::Switching,
                    _ => State::Retrying,
                };
                self.dispatch(DReason::after(Some(p.kind)), now);
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

    /// A dispatch nobody claimed for longer than the dispatch timeout:
    /// nobody is picking the route's work up, so it stops for a person.
    pub fn stop_unclaimed(&mut self, now: i64) {
        let g = self.generation;
        let unclaimed = self.dispatches.iter().any(|d| {
            d.generation == g
                && d.status == DStatus::Pending
                && now - d.created > DISPATCH_TIMEOUT_MS
        });
        if unclaimed && matches!(self.state, State::Retrying | State::Switching) {
            self.transition();
            self.stop("dispatch_not_claimed");
        }
    }
}

/// docs/design.md's state table, the steps it leaves implicit (switching ends at
/// the switch's acknowledgement or success; a stop can restart with retry
/// or skip; an unacknowledged dispatch whose lease ran out, or one nobody
/// claimed in time, stops; any route but a stopped one can be stopped or
/// cancelled; a held switch fires or moves like a wait; a late effect
/// stops an undelivered successor), and the moves that change no state
/// (an effect counted, a late effect recorded, a wait moved by a circuit,
/// a dispatch acknowledged): the only `(from, event kind, to)` an event
/// may record.
pub fn allowed(from: &str, kind: &str, to: &str) -> bool {
    let failing = matches!(from, "active" | "retrying" | "switching");
    let waiting = matches!(from, "retry_wait" | "waiting_for_reset");
    let recovering = waiting || matches!(from, "retrying" | "switching");
    match kind {
        "route.failure" => {
            failing
                && matches!(
                    to,
                    "waiting_for_reset" | "retry_wait" | "switching" | "action_required"
                )
        }
        "route.fired" => (waiting && to == "retrying") || (from == "switching" && to == from),
        "route.held" => (waiting || from == "switching") && to == from,
        "route.action" => {
            (waiting && matches!(to, "retrying" | "switching" | "action_required"))
                || (from == "action_required"
                    && matches!(to, "retrying" | "switching" | "action_required"))
                || (failing && to == "action_required")
        }
        "route.success" => failing && to == "active",
        "route.dispatch_acked" => {
            (from == "switching" && to == "active") || (from == to && from == "retrying")
        }
        "route.ambiguous" | "route.unclaimed" => {
            matches!(from, "retrying" | "switching") && to == "action_required"
        }
        "route.effect" => from == to,
        // Recorded, or (the successor not yet delivered) a stop.
        "route.late_effect" => from == to || (recovering && to == "action_required"),
        _ => false,
    }
}

/// Event kinds that change nothing the fence protects: the generation stays.
pub fn keeps_generation(kind: &str, from: &str, to: &str) -> bool {
    kind == "route.dispatch_acked"
        || (matches!(kind, "route.effect" | "route.late_effect") && from == to)
}
