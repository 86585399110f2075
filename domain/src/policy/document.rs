//! The typed version-1 document. Values of these types are always valid and
//! canonical: they are produced by [`crate::policy::validate`] (or built from
//! the defaults), and disabled sections hold zeros.

use super::class::PolicyClass;
use super::limits::POLICY_VERSION;
use serde::{Deserialize, Serialize};

wire_names! {
    /// What to do once retries and reset waiting are used up (or disabled).
    #[derive(Default)]
    pub enum OnExhausted {
        /// Exclude the candidate for this route cycle and move to the next one.
        #[default]
        Skip,
        /// Stop the route for a person (`action_required`).
        Stop,
    }
}

/// Same-candidate retry with exponential backoff.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RetryPolicy {
    pub enabled: bool,
    /// Additional attempts after the failed one (1–10 when enabled, else 0).
    pub max_retries: u32,
    /// Delay before the first retry (1–3600 s when enabled, else 0); later
    /// delays double.
    pub initial_interval_seconds: u32,
}

/// Waiting for a trusted, validated future reset time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WaitForReset {
    pub enabled: bool,
    /// Longest reset this policy waits for (1–604800 s when enabled, else 0).
    pub max_wait_seconds: u32,
}

/// The policy for one class of one candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClassPolicy {
    pub retry: RetryPolicy,
    pub wait_for_reset: WaitForReset,
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "skip"))]
    pub on_exhausted: OnExhausted,
}

/// A candidate's whole policy document: one policy per configurable class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CandidatePolicy {
    /// Always 1.
    pub version: u32,
    pub transient: ClassPolicy,
    pub hard: ClassPolicy,
}

impl Default for CandidatePolicy {
    /// New candidates skip immediately on both classes: no hidden delays.
    fn default() -> Self {
        CandidatePolicy {
            version: POLICY_VERSION,
            transient: ClassPolicy::default(),
            hard: ClassPolicy::default(),
        }
    }
}

/// The browser's readers (`crate::wire_json`): every field required, no
/// others, as `deny_unknown_fields` says.
#[cfg(any(test, feature = "reader"))]
mod read {
    use super::*;
    use crate::wire_json::{Error, Fields, FromJson};
    use serde_json::Value;

    impl FromJson for RetryPolicy {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = Fields::of(v)?;
            o.only(&["enabled", "max_retries", "initial_interval_seconds"])?;
            Ok(RetryPolicy {
                enabled: o.get("enabled")?,
                max_retries: o.get("max_retries")?,
                initial_interval_seconds: o.get("initial_interval_seconds")?,
            })
        }
    }

    impl FromJson for WaitForReset {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = Fields::of(v)?;
            o.only(&["enabled", "max_wait_seconds"])?;
            Ok(WaitForReset {
                enabled: o.get("enabled")?,
                max_wait_seconds: o.get("max_wait_seconds")?,
            })
        }
    }

    impl FromJson for ClassPolicy {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = Fields::of(v)?;
            o.only(&["retry", "wait_for_reset", "on_exhausted"])?;
            Ok(ClassPolicy {
                retry: o.get("retry")?,
                wait_for_reset: o.get("wait_for_reset")?,
                on_exhausted: o.get("on_exhausted")?,
            })
        }
    }

    impl FromJson for CandidatePolicy {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = Fields::of(v)?;
            o.only(&["version", "transient", "hard"])?;
            Ok(CandidatePolicy {
                version: o.get("version")?,
                transient: o.get("transient")?,
                hard: o.get("hard")?,
            })
        }
    }
}

impl CandidatePolicy {
    pub fn class(&self, class: PolicyClass) -> &ClassPolicy {
        match class {
            PolicyClass::Transient => &self.transient,
            PolicyClass::Hard => &self.hard,
        }
    }

    pub fn class_mut(&mut self, class: PolicyClass) -> &mut ClassPolicy {
        match class {
            PolicyClass::Transient => &mut self.transient,
            PolicyClass::Hard => &mut self.hard,
        }
    }
}

impl ClassPolicy {
    /// No retry, no wait, then `outcome`: what `try_next` and `stop` map to.
    pub fn immediate(outcome: OnExhausted) -> Self {
        ClassPolicy {
            on_exhausted: outcome,
            ..ClassPolicy::default()
        }
    }

    /// Disabled sections store zeros, whatever the input said.
    pub fn canonical(mut self) -> Self {
        if !self.retry.enabled {
            self.retry.max_retries = 0;
            self.retry.initial_interval_seconds = 0;
        }
        if !self.wait_for_reset.enabled {
            self.wait_for_reset.max_wait_seconds = 0;
        }
        self
    }
}
