//! The effect-safety gate. Classification alone never authorises replay:
//! the evidence must name the route's current generation, invocation and
//! prompt generation, its `phase` must place the failure before any result
//! (`launch`, `session_init` or `prompt`), and nothing may suggest the
//! agent already produced output or touched tools. Silence is not safety:
//! a report without a phase is unsafe, because nobody can tell where the
//! failure happened. No setting overrides the gate.
//!
//! The one exception is a provider-supported resume: the report names the
//! provider-native session its effects were reported under and the
//! provider-side generation (turn) to resume, so the successor continues
//! that session instead of repeating the prompt
//! ([`GateVerdict::Resumable`]).

use classify::Phase;
pub use domain::route::UnsafeReason;

/// The gate's answer for one failure report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GateVerdict {
    /// Current, before any result and effect-safe: the policy may act.
    Current,
    /// Current and past the boundary, but the provider can resume the
    /// very session and turn it failed in: the policy may retry or wait
    /// on the same candidate, whose successor resumes instead of
    /// re-sending the prompt; a switch to another candidate is unsafe.
    Resumable,
    /// Names another generation, invocation or prompt: changes nothing.
    Stale,
    /// Current, but replay may repeat work (or nobody can tell): manual
    /// recovery, with the reason.
    EffectUnsafe(UnsafeReason),
}

/// What the route knows about its current invocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EffectGate<'a> {
    pub generation: i64,
    pub invocation_id: &'a str,
    pub prompt_generation: i64,
    /// Effects reported through `POST /routes/{id}/effects` for this invocation.
    pub reported_effects: i64,
    /// The provider session an effect report named, if any.
    pub provider_session_id: Option<&'a str>,
}

/// What the failure report claims.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GateInput<'a> {
    pub generation: Option<i64>,
    pub invocation_id: Option<&'a str>,
    pub prompt_generation: Option<i64>,
    /// `acp_update` items with output or tool activity before the error.
    pub effect_items: usize,
    /// Where in the invocation's life the failure happened, if said.
    pub phase: Option<Phase>,
    /// A provider-supported resume: the provider-native session and the
    /// provider-side generation (turn) it resumes.
    pub resumable_session: Option<&'a str>,
    pub resumable_generation: Option<i64>,
}

/// Whether a phase places the failure before any result.
pub fn before_any_result(phase: Option<Phase>) -> Result<(), UnsafeReason> {
    match phase {
        Some(Phase::Launch | Phase::SessionInit | Phase::Prompt) => Ok(()),
        Some(Phase::Stream) => Err(UnsafeReason::OutputStarted),
        Some(Phase::Teardown) => Err(UnsafeReason::AtTeardown),
        None => Err(UnsafeReason::BoundaryUnknown),
    }
}

impl EffectGate<'_> {
    pub fn check(&self, input: &GateInput<'_>) -> GateVerdict {
        // Identity is required, not assumed: a report that does not say
        // which invocation it is about cannot authorise anything.
        let current = input.generation == Some(self.generation)
            && input.invocation_id == Some(self.invocation_id)
            && input.prompt_generation == Some(self.prompt_generation);
        if !current {
            return GateVerdict::Stale;
        }
        // The most concrete evidence first: effects seen, then the phase.
        let unsafe_reason = if self.reported_effects > 0 {
            Some(UnsafeReason::EffectsReported)
        } else if input.effect_items > 0 {
            Some(UnsafeReason::EffectsInEvidence)
        } else {
            before_any_result(input.phase).err()
        };
        let Some(reason) = unsafe_reason else {
            return GateVerdict::Current;
        };
        // Past the boundary, but the provider can resume the session the
        // effects were reported under, at a turn it names: the successor
        // continues it rather than repeating the prompt. Only a session
        // the adapter reported with its effects counts (a claim made only
        // in the failure report proves nothing), and a report that knows
        // neither the phase nor a turn to resume is not a resume.
        let resumable = input.resumable_generation.is_some()
            && input.resumable_session.is_some()
            && input.resumable_session == self.provider_session_id
            && input.phase.is_some();
        if resumable {
            GateVerdict::Resumable
        } else {
            GateVerdict::EffectUnsafe(reason)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(effects: i64, session: Option<&str>) -> EffectGate<'_> {
        EffectGate {
            generation: 3,
            invocation_id: "inv",
            prompt_generation: 1,
            reported_effects: effects,
            provider_session_id: session,
        }
    }

    fn input() -> GateInput<'static> {
        GateInput {
            generation: Some(3),
            invocation_id: Some("inv"),
            prompt_generation: Some(1),
            effect_items: 0,
            phase: Some(Phase::Prompt),
            resumable_session: None,
            resumable_generation: None,
        }
    }

    #[test]
    fn current_and_clean_passes() {
        assert_eq!(gate(0, None).check(&input()), GateVerdict::Current);
    }

    #[test]
    fn any_identity_mismatch_or_omission_is_stale() {
        for i in [
            GateInput {
                generation: Some(2),
                ..input()
            },
            GateInput {
                invocation_id: Some("other"),
                ..input()
            },
            GateInput {
                prompt_generation: Some(2),
                ..input()
            },
            GateInput {
                generation: None,
                ..input()
            },
            GateInput {
                invocation_id: None,
                ..input()
            },
        ] {
            assert_eq!(gate(0, None).check(&i), GateVerdict::Stale);
        }
    }

    #[test]
    fn effects_fail_closed() {
        assert_eq!(
            gate(1, None).check(&input()),
            GateVerdict::EffectUnsafe(UnsafeReason::EffectsReported)
        );
        assert_eq!(
            gate(0, None).check(&GateInput {
                effect_items: 2,
                ..input()
            }),
            GateVerdict::EffectUnsafe(UnsafeReason::EffectsInEvidence)
        );
    }

    #[test]
    fn only_a_phase_before_any_result_passes() {
        for phase in [Phase::Launch, Phase::SessionInit, Phase::Prompt] {
            let i = GateInput {
                phase: Some(phase),
                ..input()
            };
            assert_eq!(gate(0, None).check(&i), GateVerdict::Current, "{phase:?}");
        }
        for (phase, reason) in [
            (None, UnsafeReason::BoundaryUnknown),
            (Some(Phase::Stream), UnsafeReason::OutputStarted),
            (Some(Phase::Teardown), UnsafeReason::AtTeardown),
        ] {
            let i = GateInput { phase, ..input() };
            assert_eq!(
                gate(0, None).check(&i),
                GateVerdict::EffectUnsafe(reason),
                "{phase:?}"
            );
        }
    }

    #[test]
    fn a_resumable_retry_of_the_same_session_and_generation_passes() {
        let resumable = GateInput {
            effect_items: 1,
            resumable_session: Some("sess"),
            resumable_generation: Some(3),
            ..input()
        };
        assert_eq!(
            gate(1, Some("sess")).check(&resumable),
            GateVerdict::Resumable
        );
        // Mid-stream too: resuming is what a stream failure needs.
        let streaming = GateInput {
            phase: Some(Phase::Stream),
            ..resumable
        };
        assert_eq!(
            gate(1, Some("sess")).check(&streaming),
            GateVerdict::Resumable
        );
        let unsafe_ = GateVerdict::EffectUnsafe(UnsafeReason::EffectsReported);
        // Another session than the effects were reported under, or none.
        assert_eq!(gate(1, Some("other")).check(&resumable), unsafe_);
        assert_eq!(gate(1, None).check(&resumable), unsafe_);
        // No turn to resume at, or no phase: not a resume.
        let no_turn = GateInput {
            resumable_generation: None,
            ..resumable
        };
        assert_eq!(gate(1, Some("sess")).check(&no_turn), unsafe_);
        let no_phase = GateInput {
            phase: None,
            ..resumable
        };
        assert_eq!(gate(1, Some("sess")).check(&no_phase), unsafe_);
    }
}
