//! Why a classification came out as it did: the `explain` object that
//! `kandev-recovery classify --explain` prints next to each classification
//! and that every attempt the service records keeps inside its
//! classification. It names the rules that matched in each tier, the one
//! that decided (or why none did), where the text or fact it used came
//! from, what provenance set aside, and which timing source gave the reset.
//! The classification's fixed fields stay as they are; this is alongside.

use serde::{Deserialize, Serialize};

wire_names! {
    /// How the best tier with a match decided.
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum ExplainOutcome {
        /// One rule (its tier's rules agreed on the code).
        Rule,
        /// The best tier's rules named different codes: a person decides.
        Conflict,
        /// No rule matched.
        Unmatched,
    }
}

wire_names! {
    /// Which of the classifier's texts a rule read: error text (bodies,
    /// error messages, stderr, stdout), the agent's message chunks, or the
    /// text of failed tool calls.
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum ExplainText {
        Error,
        Agent,
        Tool,
    }
}

wire_names! {
    /// Where a reset time came from, in the classifier's precedence order.
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum TimingSource {
        /// `retry-after-ms`.
        RetryAfterMs,
        /// `retry-after` (seconds or an HTTP date).
        RetryAfter,
        /// `x-ratelimit-reset-*`, `anthropic-ratelimit-*-reset` and kin.
        ResetHeaders,
        /// `anthropic-ratelimit-unified-*-reset`: subscription windows.
        UnifiedReset,
        /// Google's `RetryInfo.retryDelay`.
        RetryInfo,
        /// A reset field in a JSON body (`resets_at`, `resetsAt`,
        /// `resets_in_seconds`…).
        BodyFields,
        /// "try again in 20 minutes".
        Phrase,
        /// Epoch seconds in text (`limit reached|1764504000`).
        Epoch,
        /// A clock time with a zone ("resets 5pm (Europe/Paris)").
        Clock,
    }
}

/// Everything the classifier weighed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Explain {
    pub outcome: ExplainOutcome,
    /// The deciding rule's id; `null` on a conflict or no match.
    pub decided_by: Option<String>,
    /// The tiers with a matching rule, best first, each with its matching
    /// rules; the first tier decides, the others are shown for context.
    pub tiers: Vec<ExplainTier>,
    /// Where the deciding rule found its evidence; `null` without a rule.
    pub evidence: Option<ExplainPlace>,
    /// Items provenance left unread (an echoed prompt, a notice the agent
    /// superseded, an error it carried on after), by index.
    pub set_aside: Vec<u32>,
    /// The reset: the sources the deciding rule trusts, in precedence
    /// order, and the one that gave the time (`null` when none did).
    pub timing: ExplainTiming,
}

/// One tier's matching rules.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ExplainTier {
    /// The tier's name in the catalogue (`structured`, `signature`…).
    pub tier: String,
    pub rules: Vec<ExplainRule>,
}

/// A rule whose conditions held, and the code it names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ExplainRule {
    pub rule: String,
    pub code: String,
}

/// The item (by index in the envelope) and, for a text pattern, the text
/// and the stream line the deciding rule matched in. A rule with no text
/// pattern names the item carrying its structured fact (a status, an error
/// identifier) and no text source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ExplainPlace {
    pub item: u32,
    /// The item's kind (`http`, `stderr`, `stdout`, `acp_error`…).
    pub kind: String,
    pub text: Option<ExplainText>,
    /// The line of a stream item, from 0.
    pub line: Option<u32>,
}

/// Where the reset came from.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ExplainTiming {
    pub trusted: Vec<TimingSource>,
    pub source: Option<TimingSource>,
}

impl Explain {
    /// A compact line for people: "claude_code.rate_limit_rejected
    /// (structured) from item 0 http · reset from body_fields".
    pub fn summary(&self) -> String {
        let tier = self.tiers.first().map(|t| t.tier.as_str()).unwrap_or("");
        let mut s = match (&self.outcome, &self.decided_by) {
            (ExplainOutcome::Rule, Some(rule)) => format!("{rule} ({tier})"),
            (ExplainOutcome::Conflict, _) => {
                let rules: Vec<&str> = self
                    .tiers
                    .first()
                    .map(|t| t.rules.iter().map(|r| r.rule.as_str()).collect())
                    .unwrap_or_default();
                format!("conflict in {tier}: {}", rules.join(", "))
            }
            _ => "no rule matched".to_string(),
        };
        if let Some(e) = &self.evidence {
            s.push_str(&format!(" from item {} {}", e.item, e.kind));
            if let Some(t) = e.text {
                s.push_str(&format!(" ({t} text"));
                if let Some(l) = e.line {
                    s.push_str(&format!(", line {l}"));
                }
                s.push(')');
            }
        }
        let others: usize = self.tiers.iter().skip(1).map(|t| t.rules.len()).sum();
        if others > 0 {
            s.push_str(&format!(" · {others} lower-tier match(es)"));
        }
        if !self.set_aside.is_empty() {
            s.push_str(&format!(" · {} item(s) set aside", self.set_aside.len()));
        }
        match self.timing.source {
            Some(t) => s.push_str(&format!(" · reset from {t}")),
            None if !self.timing.trusted.is_empty() => s.push_str(" · no trusted reset"),
            None => {}
        }
        s
    }
}

#[cfg(any(test, feature = "reader"))]
mod reader {
    use super::*;
    use crate::wire_json::{Error, Fields, FromJson};
    use serde_json::Value;

    impl FromJson for Explain {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = Fields::of(v)?;
            Ok(Explain {
                outcome: o.get("outcome")?,
                decided_by: o.get("decided_by")?,
                tiers: o.or_default("tiers")?,
                evidence: o.get("evidence")?,
                set_aside: o.or_default("set_aside")?,
                timing: o.or_default("timing")?,
            })
        }
    }

    impl FromJson for ExplainTier {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = Fields::of(v)?;
            Ok(ExplainTier {
                tier: o.get("tier")?,
                rules: o.or_default("rules")?,
            })
        }
    }

    impl FromJson for ExplainRule {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = Fields::of(v)?;
            Ok(ExplainRule {
                rule: o.get("rule")?,
                code: o.get("code")?,
            })
        }
    }

    impl FromJson for ExplainPlace {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = Fields::of(v)?;
            Ok(ExplainPlace {
                item: o.get("item")?,
                kind: o.get("kind")?,
                text: o.get("text")?,
                line: o.get("line")?,
            })
        }
    }

    impl FromJson for ExplainTiming {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = Fields::of(v)?;
            Ok(ExplainTiming {
                trusted: o.or_default("trusted")?,
                source: o.get("source")?,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_back_what_it_writes_and_sums_up() {
        let e = Explain {
            outcome: ExplainOutcome::Rule,
            decided_by: Some("claude_code.rate_limit_rejected".into()),
            tiers: vec![
                ExplainTier {
                    tier: "structured".into(),
                    rules: vec![ExplainRule {
                        rule: "claude_code.rate_limit_rejected".into(),
                        code: "quota_limited".into(),
                    }],
                },
                ExplainTier {
                    tier: "status".into(),
                    rules: vec![ExplainRule {
                        rule: "http.429".into(),
                        code: "rate_limited".into(),
                    }],
                },
            ],
            evidence: Some(ExplainPlace {
                item: 0,
                kind: "http".into(),
                text: None,
                line: None,
            }),
            set_aside: vec![2],
            timing: ExplainTiming {
                trusted: vec![TimingSource::UnifiedReset, TimingSource::BodyFields],
                source: Some(TimingSource::BodyFields),
            },
        };
        let v = serde_json::to_value(&e).expect("writes");
        assert_eq!(v["timing"]["source"], "body_fields");
        assert_eq!(v["outcome"], "rule");
        let back: Explain = crate::wire_json::FromJson::from_json(&v).expect("reads");
        assert_eq!(back, e);
        assert_eq!(
            e.summary(),
            "claude_code.rate_limit_rejected (structured) from item 0 http · 1 lower-tier match(es) · 1 item(s) set aside · reset from body_fields"
        );
    }
}
