//! What a sequence is made of: the profile it starts with and the steps
//! it takes, as proptest strategies. Steps are chosen without looking at
//! the route (a failure for a route that is waiting, an acknowledgement
//! with nothing claimed): how the service answers those is part of what is
//! checked. Every field shrinks towards the simplest case, so a failing
//! sequence shrinks to a short one worth reading.

use super::reference::{Act, Pol};
use proptest::prelude::*;

/// The profile a sequence starts with: `candidates` (1–3) with the first
/// `candidates` of `policies`, and the rival route's single candidate on
/// the resources of candidate `rival_on`.
#[derive(Debug, Clone)]
pub struct Setup {
    pub candidates: usize,
    pub policies: Vec<(Pol, Pol)>,
    pub rival_on: usize,
}

/// Whose invocation a report names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ident {
    /// The route's current generation, invocation and prompt generation.
    Current,
    /// One generation back: an attempt the route has left.
    OldGeneration,
    /// Another invocation altogether.
    OtherInvocation,
}

/// The `phase` the harness puts on a failure's envelope (most catalogue
/// fixtures have none of their own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Boundary {
    /// Before any result: automatic recovery may go ahead.
    Prompt,
    Launch,
    SessionInit,
    /// Whatever the fixture says (mostly nothing).
    Fixture,
    /// No phase at all: the boundary is unknown.
    Missing,
    /// Output had started.
    Stream,
    Teardown,
}

impl Boundary {
    /// The phase to set (`Some(None)`: remove it; `None`: keep the fixture's).
    pub fn phase(self) -> Option<Option<&'static str>> {
        match self {
            Boundary::Prompt => Some(Some("prompt")),
            Boundary::Launch => Some(Some("launch")),
            Boundary::SessionInit => Some(Some("session_init")),
            Boundary::Fixture => None,
            Boundary::Missing => Some(None),
            Boundary::Stream => Some(Some("stream")),
            Boundary::Teardown => Some(Some("teardown")),
        }
    }
}

/// A failure report's `resumable` claim: the session (the one an effect
/// report named, or another) and whether it names a provider-side turn;
/// `effect_first`: an effect naming session `sess-1` is reported for the
/// invocation just before (what an adapter that can resume does).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resume {
    pub same_session: bool,
    pub turn: bool,
    pub effect_first: bool,
}

/// Whose invocation an effect report names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EffectOf {
    /// The route's current generation, invocation and prompt generation.
    Current,
    /// The current invocation, one generation back (it failed, say).
    OldGeneration,
    /// The invocation of the route's last decided failure, at the
    /// generation and prompt generation it was reported with (a retry of
    /// it may have fallen due, or been delivered, since).
    LastFailed,
}

/// Timed evidence, relative to the test clock (the fixtures' own times
/// are long past once the clock has moved).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timed {
    /// Claude Code's usage limit with its reset `secs` from now (hard).
    UsageLimit,
    /// Anthropic's per-minute rate limit, `retry-after: secs` (transient).
    RetryAfter,
}

#[derive(Debug, Clone)]
pub enum Step {
    /// A failure whose evidence is catalogue fixture `fixture` (modulo
    /// their number), at a boundary, perhaps claiming a resume.
    Fail {
        fixture: usize,
        ident: Ident,
        boundary: Boundary,
        resume: Option<Resume>,
    },
    /// A failure with a reset or retry-after hint `secs` from now.
    FailTimed {
        timed: Timed,
        secs: u32,
        ident: Ident,
    },
    /// Output or tool use, perhaps naming the provider session `sess-1`.
    Effect {
        of: EffectOf,
        session: bool,
    },
    Success {
        ident: Ident,
    },
    /// Moves the test clock and fires what is due, then stops routes
    /// whose dispatch lease ran out or whose dispatch nobody claimed in
    /// time (what `POST /test/clock` does).
    Advance {
        secs: u32,
    },
    /// As `Advance`, to `secs` past the route's pending wait's deadline
    /// (or by `secs`, when nothing is pending): long waits fall due too.
    AdvanceToWait {
        secs: u32,
    },
    Action {
        act: Act,
        stale: bool,
    },
    Claim {
        lease_secs: u32,
    },
    /// Acknowledges the dispatch claimed last, at its generation or a wrong one.
    Ack {
        stale: bool,
    },
    /// What a runner does: claim, then acknowledge at once.
    Deliver {
        lease_secs: u32,
    },
    /// A new revision of the profile: new policies, candidates rotated,
    /// and perhaps one of them (the route's own, say) removed.
    Edit {
        policies: Vec<(Pol, Pol)>,
        rotate: usize,
        drop: Option<usize>,
    },
    /// The store and the services re-opened on the same database, with the
    /// start-up reconciliation `serve` runs.
    Restart,
    /// The rival route (another profile, on one of the same resources,
    /// whose policy stops) fails, with a fixture's evidence or timed
    /// evidence: it opens or extends that circuit. `retry_first`: a
    /// stopped rival is retried by hand first, so the failure counts.
    RivalFail {
        fixture: usize,
        timed: Option<(Timed, u32)>,
        retry_first: bool,
    },
    /// The rival is retried by hand, so it can fail again.
    RivalRetry,
}

pub fn pol() -> impl Strategy<Value = Pol> {
    (
        prop_oneof![2 => Just(0u32), 3 => 1u32..=3, 1 => Just(10u32)],
        prop_oneof![Just(1u32), Just(5), Just(30), Just(3600)],
        prop_oneof![2 => Just(0u32), 1 => Just(60u32), 1 => Just(600), 1 => Just(7200), 1 => Just(604_800)],
        any::<bool>(),
    )
        .prop_map(|(retries, initial, wait, skip)| Pol {
            retries,
            initial: if retries > 0 { initial } else { 0 },
            wait,
            skip,
        })
}

fn policies() -> impl Strategy<Value = Vec<(Pol, Pol)>> {
    prop::collection::vec((pol(), pol()), 3)
}

pub fn setup() -> impl Strategy<Value = Setup> {
    // The rival mostly on a candidate a skip from the first one meets.
    let rival_on = prop_oneof![1 => Just(0usize), 2 => Just(1usize), 1 => Just(2usize)];
    (1usize..=3, policies(), rival_on).prop_map(|(candidates, policies, rival_on)| Setup {
        candidates,
        policies,
        rival_on: rival_on % candidates,
    })
}

fn ident() -> impl Strategy<Value = Ident> {
    prop_oneof![
        8 => Just(Ident::Current),
        1 => Just(Ident::OldGeneration),
        1 => Just(Ident::OtherInvocation),
    ]
}

fn boundary() -> impl Strategy<Value = Boundary> {
    prop_oneof![
        12 => Just(Boundary::Prompt),
        1 => Just(Boundary::Launch),
        1 => Just(Boundary::SessionInit),
        2 => Just(Boundary::Fixture),
        1 => Just(Boundary::Missing),
        2 => Just(Boundary::Stream),
        1 => Just(Boundary::Teardown),
    ]
}

fn resume() -> impl Strategy<Value = Option<Resume>> {
    prop::option::weighted(
        0.25,
        (
            prop::bool::weighted(0.8),
            prop::bool::weighted(0.8),
            prop::bool::weighted(0.7),
        )
            .prop_map(|(same_session, turn, effect_first)| Resume {
                same_session,
                turn,
                effect_first,
            }),
    )
}

fn effect_of() -> impl Strategy<Value = EffectOf> {
    prop_oneof![
        3 => Just(EffectOf::Current),
        1 => Just(EffectOf::OldGeneration),
        2 => Just(EffectOf::LastFailed),
    ]
}

fn seconds() -> impl Strategy<Value = u32> {
    prop_oneof![
        6 => 0u32..=40,
        2 => 41u32..=700,
        1 => Just(3_600u32),
        1 => Just(7_300u32),
        1 => Just(90_000u32),
    ]
}

/// How long the rival's timed failures hold a circuit: mostly longer than
/// the main route's clock moves, so its retries and switches meet them,
/// and now and then beyond what a switch waits for.
fn hold_seconds() -> impl Strategy<Value = u32> {
    prop_oneof![
        2 => 0u32..=40,
        4 => 41u32..=900,
        1 => 901u32..=3_600,
        1 => Just(7_300u32),
    ]
}

fn timed() -> impl Strategy<Value = Timed> {
    prop_oneof![Just(Timed::UsageLimit), Just(Timed::RetryAfter)]
}

fn act() -> impl Strategy<Value = Act> {
    prop_oneof![
        3 => Just(Act::RetryNow),
        2 => Just(Act::SkipNow),
        1 => Just(Act::Cancel),
        1 => Just(Act::Stop),
    ]
}

pub fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (any::<usize>(), ident(), boundary(), resume())
            .prop_map(|(fixture, ident, boundary, resume)| Step::Fail { fixture, ident, boundary, resume }),
        4 => (timed(), seconds(), ident())
            .prop_map(|(timed, secs, ident)| Step::FailTimed { timed, secs, ident }),
        3 => (effect_of(), any::<bool>())
            .prop_map(|(of, session)| Step::Effect { of, session }),
        3 => ident().prop_map(|ident| Step::Success { ident }),
        6 => seconds().prop_map(|secs| Step::Advance { secs }),
        3 => (0u32..=2).prop_map(|secs| Step::AdvanceToWait { secs }),
        6 => (act(), prop::bool::weighted(0.2))
            .prop_map(|(act, stale)| Step::Action { act, stale }),
        3 => prop_oneof![1u32..=5, 6u32..=120, Just(3_600u32)].prop_map(|lease_secs| Step::Claim { lease_secs }),
        3 => prop::bool::weighted(0.2).prop_map(|stale| Step::Ack { stale }),
        4 => (6u32..=600).prop_map(|lease_secs| Step::Deliver { lease_secs }),
        2 => (policies(), 0usize..3, prop::option::weighted(0.3, 0usize..3))
            .prop_map(|(policies, rotate, drop)| Step::Edit { policies, rotate, drop }),
        1 => Just(Step::Restart),
        5 => (
            any::<usize>(),
            prop::option::weighted(0.7, (timed(), hold_seconds())),
            prop::bool::weighted(0.6),
        )
            .prop_map(|(fixture, timed, retry_first)| Step::RivalFail { fixture, timed, retry_first }),
        2 => Just(Step::RivalRetry),
    ]
}

pub fn steps(max: usize) -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(step(), 1..=max)
}
