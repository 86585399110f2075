//! The effect-safety gate. Classification alone never authorises replay:
//! the evidence must name the route's current generation, invocation and
//! prompt generation, and nothing may suggest the agent already produced
//! output or touched tools. No setting overrides it.

use serde::Serialize;

/// The gate's answer for one failure report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GateVerdict {
    /// Current and effect-safe: the policy may act.
    Current,
    /// Names another generation, invocation or prompt: changes nothing.
    Stale,
    /// Current, but replay may repeat work: manual recovery.
    EffectUnsafe,
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
    /// The failure happened at teardown: the prompt may have completed.
    pub after_completion: bool,
    /// A provider-supported resumable retry: session and generation.
    pub resumable_session: Option<&'a str>,
    pub resumable_generation: Option<i64>,
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
        let had_effects =
            self.reported_effects > 0 || input.effect_items > 0 || input.after_completion;
        if !had_effects {
            return GateVerdict::Current;
        }
        // Output happened, but the provider can resume the very same
        // session and generation without replaying it.
        let resumable = input.resumable_generation == Some(self.generation)
            && input.resumable_session.is_some()
            && input.resumable_session == self.provider_session_id;
        if resumable {
            GateVerdict::Current
        } else {
            GateVerdict::EffectUnsafe
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
            after_completion: false,
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
        assert_eq!(gate(1, None).check(&input()), GateVerdict::EffectUnsafe);
        assert_eq!(
            gate(0, None).check(&GateInput {
                effect_items: 2,
                ..input()
            }),
            GateVerdict::EffectUnsafe
        );
        assert_eq!(
            gate(0, None).check(&GateInput {
                after_completion: true,
                ..input()
            }),
            GateVerdict::EffectUnsafe
        );
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
            GateVerdict::Current
        );
        assert_eq!(
            gate(1, Some("other")).check(&resumable),
            GateVerdict::EffectUnsafe
        );
        assert_eq!(gate(1, None).check(&resumable), GateVerdict::EffectUnsafe);
        let old = GateInput {
            resumable_generation: Some(2),
            ..resumable
        };
        assert_eq!(gate(1, Some("sess")).check(&old), GateVerdict::EffectUnsafe);
    }
}
