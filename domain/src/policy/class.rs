//! Error classes. Two are configurable ([`PolicyClass`]); the classifier can
//! also answer `not_provider` or `unclassified`, which no policy acts on.

wire_names! {
    /// Every class a classification can carry.
    #[derive(PartialOrd, Ord)]
    pub enum ErrorClass {
        Transient,
        Hard,
        NotProvider,
        Unclassified,
    }
}

impl ErrorClass {
    /// The policy class that governs this error class, if any. `not_provider`
    /// and `unclassified` never reach a policy.
    pub fn policy_class(self) -> Option<PolicyClass> {
        match self {
            ErrorClass::Transient => Some(PolicyClass::Transient),
            ErrorClass::Hard => Some(PolicyClass::Hard),
            ErrorClass::NotProvider | ErrorClass::Unclassified => None,
        }
    }
}

wire_names! {
    /// The two classes a candidate configures.
    #[derive(PartialOrd, Ord)]
    pub enum PolicyClass {
        Transient,
        Hard,
    }
}

/// The codes catalogue version 1 starts with, and their classes. The
/// classifier's catalogue is the runtime registry and may add codes; this
/// table exists so that pure code (legacy normalisation, the browser) can
/// name the built-in codes without loading the catalogue. A test in the
/// server checks the catalogue agrees with it.
pub const BUILTIN_CODES: &[(&str, ErrorClass)] = &[
    ("network_unavailable", ErrorClass::Transient),
    ("provider_unavailable", ErrorClass::Transient),
    ("provider_overloaded", ErrorClass::Transient),
    ("model_capacity", ErrorClass::Transient),
    ("rate_limited", ErrorClass::Transient),
    ("agent_transport_lost", ErrorClass::Transient),
    ("quota_limited", ErrorClass::Hard),
    ("subscription_required", ErrorClass::Hard),
    ("auth_required", ErrorClass::Hard),
    ("missing_credentials", ErrorClass::Hard),
    ("provider_not_configured", ErrorClass::Hard),
    ("model_unavailable", ErrorClass::Hard),
    ("context_window_exceeded", ErrorClass::NotProvider),
    ("request_invalid", ErrorClass::NotProvider),
    ("content_policy", ErrorClass::NotProvider),
    ("cancelled", ErrorClass::NotProvider),
    ("tool_failure", ErrorClass::NotProvider),
    ("local_runtime", ErrorClass::NotProvider),
    ("permission_denied", ErrorClass::NotProvider),
    ("unknown", ErrorClass::Unclassified),
];

/// Class of a built-in code.
pub fn builtin_class_of(code: &str) -> Option<ErrorClass> {
    BUILTIN_CODES
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, class)| *class)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_round_trips_through_its_name() {
        for &c in ErrorClass::ALL {
            assert_eq!(ErrorClass::parse(c.as_str()), Some(c));
            assert_eq!(serde_json::to_value(c).unwrap(), c.as_str());
        }
        assert_eq!(ErrorClass::parse("fatal"), None);
    }

    #[test]
    fn both_policy_classes_have_builtin_codes() {
        for &pc in PolicyClass::ALL {
            assert!(BUILTIN_CODES
                .iter()
                .any(|(_, c)| c.policy_class() == Some(pc)));
        }
    }
}
