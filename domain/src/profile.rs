//! Dynamic profiles on the wire: an ordered list of candidates, each with its
//! version-1 policy document, plus the revision used for optimistic
//! concurrency. Input is read with the same field-addressable validator the
//! browser runs, so a profile the form accepts is a profile the server
//! accepts.

use crate::ids::ProfileId;
use crate::policy::class::builtin_class_of;
use crate::policy::limits::*;
use crate::policy::reader::{Errors, Obj};
use crate::policy::validate::read_candidate_policy;
use crate::policy::{
    describe, retry_schedule, CandidatePolicy, ErrorClass, FieldError, FieldErrorCode,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One concrete agent profile inside a dynamic profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Candidate {
    pub id: String,
    pub label: String,
    pub agent: String,
    pub provider_id: String,
    pub model_id: String,
    /// Opaque reference to the caller's own agent profile.
    pub profile_ref: String,
    /// A non-secret name for the provider account this candidate uses
    /// (`team-a`), so candidates on one account share its circuit. Without
    /// one, two candidates cannot be proven to share an account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_ref: Option<String>,
    pub policy: CandidatePolicy,
}

wire_names! {
    /// Where a route's next invocation goes once a prompt succeeded.
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    #[derive(Default)]
    pub enum Prefer {
        /// Back to the highest candidate in profile order that is eligible
        /// now (not held by a shared circuit), at the next invocation after
        /// a success — never in the middle of one. New profiles' default.
        #[default]
        FirstEligible,
        /// Stay on the candidate the route is on until it fails. Profiles
        /// stored before the preference existed keep this until edited.
        Stay,
    }
}

/// A stored profile whose legacy policy could not be normalised. It is
/// shown so a person can repair it, and it authorises no work until then.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ConfigurationError {
    pub message: String,
    pub errors: Vec<FieldError>,
}

/// A dynamic profile as the API returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Profile {
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub id: ProfileId,
    pub name: String,
    /// Increases by one on every update; `PUT` must send the one it read.
    pub revision: i64,
    /// Where a route's next invocation goes after a success.
    pub prefer: Prefer,
    pub candidates: Vec<Candidate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration_error: Option<ConfigurationError>,
    #[serde(deserialize_with = "crate::wire_time::rfc3339")]
    pub created_at: chrono::DateTime<chrono::Utc>,
    #[serde(deserialize_with = "crate::wire_time::rfc3339")]
    pub updated_at: chrono::DateTime<chrono::Utc>,
}

/// The browser's readers (`crate::wire_json`), field for field as serde's.
#[cfg(any(test, feature = "reader"))]
mod read {
    use super::*;
    use crate::wire_json::{Error, Fields, FromJson};

    impl FromJson for Candidate {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = Fields::of(v)?;
            Ok(Candidate {
                id: o.get("id")?,
                label: o.get("label")?,
                agent: o.get("agent")?,
                provider_id: o.get("provider_id")?,
                model_id: o.get("model_id")?,
                profile_ref: o.get("profile_ref")?,
                account_ref: o.get("account_ref")?,
                policy: o.get("policy")?,
            })
        }
    }

    impl FromJson for ConfigurationError {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = Fields::of(v)?;
            Ok(ConfigurationError {
                message: o.get("message")?,
                errors: o.get("errors")?,
            })
        }
    }

    impl FromJson for Profile {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = Fields::of(v)?;
            Ok(Profile {
                id: o.get("id")?,
                name: o.get("name")?,
                revision: o.get("revision")?,
                prefer: o.get("prefer")?,
                candidates: o.get("candidates")?,
                configuration_error: o.get("configuration_error")?,
                created_at: o.get("created_at")?,
                updated_at: o.get("updated_at")?,
            })
        }
    }
}

impl Profile {
    /// The candidate a route moves to when `current_id` is skipped: the next
    /// one in the profile's order (wrapping) that this route cycle has not
    /// excluded. One implementation for the server's switch and the UI's
    /// "then skip to …".
    pub fn next_eligible(
        &self,
        current_id: &str,
        excluded: &[String],
    ) -> Option<(usize, &Candidate)> {
        let n = self.candidates.len();
        let start = self.candidates.iter().position(|c| c.id == current_id);
        (1..=n)
            .map(|offset| match start {
                Some(s) => (s + offset) % n,
                // A candidate removed from the profile: start from the top.
                None => offset - 1,
            })
            .map(|i| (i, &self.candidates[i]))
            .find(|(_, c)| c.id != current_id && !excluded.contains(&c.id))
    }
}

/// A validated create or update request.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileDraft {
    pub name: String,
    pub prefer: Prefer,
    pub candidates: Vec<Candidate>,
    /// The revision an update was based on (`None` on create).
    pub revision: Option<i64>,
}

// The shape `read_profile` reads, for the OpenAPI document: the reader
// walks the JSON itself so that it can address every problem to its field.
/// A profile as clients send it to create, update or validate. `revision`
/// is required on update; candidate `id`s are optional on create.
#[cfg(feature = "openapi")]
#[derive(Serialize, utoipa::ToSchema)]
pub struct ProfileWrite {
    pub name: String,
    pub revision: Option<i64>,
    /// `first_eligible` (the default) or `stay`.
    pub prefer: Option<Prefer>,
    pub candidates: Vec<CandidateWrite>,
}

/// A candidate as clients send it. Without `policy`, both classes skip
/// immediately.
#[cfg(feature = "openapi")]
#[derive(Serialize, utoipa::ToSchema)]
pub struct CandidateWrite {
    pub id: Option<String>,
    pub label: String,
    pub agent: String,
    pub provider_id: Option<String>,
    pub model_id: Option<String>,
    pub profile_ref: Option<String>,
    /// A non-secret name of the provider account (`team-a`): candidates
    /// naming the same one share its circuit.
    pub account_ref: Option<String>,
    pub policy: Option<CandidatePolicy>,
}

/// What the request is for: updates must carry the revision they read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intent {
    Create,
    Update,
}

/// Fields a client may send back unchanged from a `GET` (they are ignored).
const READ_ONLY: &[&str] = &["id", "created_at", "updated_at", "configuration_error"];

/// Reads a create/update body. Candidates without an `id` get one from
/// `new_id`; legacy policies are normalised using `class_of`.
pub fn read_profile(
    v: &Value,
    intent: Intent,
    class_of: &dyn Fn(&str) -> Option<ErrorClass>,
    new_id: &mut dyn FnMut() -> String,
) -> Result<ProfileDraft, Vec<FieldError>> {
    let mut errs = Errors::default();
    let draft = errs.checked(|errs| {
        let o = Obj::read(v, "", errs)?;
        let mut known = vec!["name", "prefer", "candidates", "revision"];
        known.extend_from_slice(READ_ONLY);
        o.reject_unknown(&known, errs);
        let name = o.string("name", MAX_NAME_CHARS, errs);
        let revision = match intent {
            Intent::Create => Some(None),
            Intent::Update => o.required("revision", errs).and_then(|r| match r.as_i64() {
                Some(r) if r >= 0 => Some(Some(r)),
                _ => {
                    errs.push(FieldError::new(
                        "revision",
                        FieldErrorCode::InvalidType,
                        "must be the whole-number revision you read",
                    ));
                    None
                }
            }),
        };
        let prefer = read_prefer(&o, errs);
        let candidates = o
            .required("candidates", errs)
            .and_then(|c| read_candidates(c, class_of, new_id, errs));
        Some(ProfileDraft {
            name: name?,
            prefer: prefer?,
            candidates: candidates?,
            revision: revision?,
        })
    });
    errs.into_result(draft)
}

/// The optional `prefer`: absent means the default, `first_eligible` (a
/// write replaces the whole profile).
fn read_prefer(o: &Obj<'_>, errs: &mut Errors) -> Option<Prefer> {
    match o.get("prefer") {
        None => Some(Prefer::default()),
        Some(Value::String(s)) => Prefer::parse(s).or_else(|| {
            errs.push(FieldError::new(
                o.at("prefer"),
                FieldErrorCode::InvalidValue,
                format!("`{s}` is not a preference; use `first_eligible` or `stay`"),
            ));
            None
        }),
        Some(other) => {
            errs.push(crate::policy::reader::wrong_type(
                &o.at("prefer"),
                "`first_eligible` or `stay`",
                other,
            ));
            None
        }
    }
}

fn read_candidates(
    v: &Value,
    class_of: &dyn Fn(&str) -> Option<ErrorClass>,
    new_id: &mut dyn FnMut() -> String,
    errs: &mut Errors,
) -> Option<Vec<Candidate>> {
    let Value::Array(items) = v else {
        errs.push(FieldError::new(
            "candidates",
            FieldErrorCode::InvalidType,
            "must be a list of candidates",
        ));
        return None;
    };
    if !(MIN_CANDIDATES..=MAX_CANDIDATES).contains(&items.len()) {
        errs.push(FieldError {
            message: format!(
                "a dynamic profile needs {MIN_CANDIDATES} to {MAX_CANDIDATES} candidates"
            ),
            ..FieldError::out_of_range(
                "candidates",
                "candidates",
                MIN_CANDIDATES as u64,
                MAX_CANDIDATES as u64,
            )
        });
        return None;
    }
    errs.checked(|errs| {
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            if let Some(c) =
                read_candidate(item, &format!("candidates[{i}]"), class_of, new_id, errs)
            {
                out.push(c);
            }
        }
        for (i, c) in out.iter().enumerate() {
            if out[..i].iter().any(|earlier| earlier.id == c.id) {
                errs.push(FieldError::new(
                    format!("candidates[{i}].id"),
                    FieldErrorCode::Duplicate,
                    format!("candidate id `{}` is used twice", c.id),
                ));
            }
        }
        Some(out)
    })
}

fn read_candidate(
    v: &Value,
    path: &str,
    class_of: &dyn Fn(&str) -> Option<ErrorClass>,
    new_id: &mut dyn FnMut() -> String,
    errs: &mut Errors,
) -> Option<Candidate> {
    errs.checked(|errs| {
        let o = Obj::read(v, path, errs)?;
        o.reject_unknown(
            &[
                "id",
                "label",
                "agent",
                "provider_id",
                "model_id",
                "profile_ref",
                "account_ref",
                "policy",
            ],
            errs,
        );
        let id = o.opt_string("id", MAX_IDENT_CHARS, errs);
        let label = o.string("label", MAX_LABEL_CHARS, errs);
        let agent = o.string("agent", MAX_IDENT_CHARS, errs);
        let provider_id = o.opt_string("provider_id", MAX_IDENT_CHARS, errs);
        let model_id = o.opt_string("model_id", MAX_IDENT_CHARS, errs);
        let profile_ref = o.opt_string("profile_ref", MAX_IDENT_CHARS, errs);
        let account_ref = read_account_ref(&o, errs);
        // A candidate without a policy gets the default: immediate skip.
        let policy = match o.get("policy") {
            Some(p) => read_candidate_policy(p, &o.at("policy"), class_of, errs),
            None => Some(CandidatePolicy::default()),
        };
        Some(Candidate {
            id: id.filter(|s| !s.is_empty()).unwrap_or_else(&mut *new_id),
            label: label?,
            agent: agent?,
            provider_id: provider_id.unwrap_or_default(),
            model_id: model_id.unwrap_or_default(),
            profile_ref: profile_ref.unwrap_or_default(),
            account_ref,
            policy: policy?,
        })
    })
}

/// The optional `account_ref`: a short name (letters, digits, `.`, `-`,
/// `_`), never an e-mail address or an account number's punctuation, since
/// it is shown to people and becomes part of a circuit's key. Absent, null
/// or blank mean no account is named.
fn read_account_ref(o: &Obj<'_>, errs: &mut Errors) -> Option<String> {
    if matches!(o.get("account_ref"), None | Some(Value::Null)) {
        return None;
    }
    let s = o
        .opt_string("account_ref", MAX_IDENT_CHARS, errs)
        .filter(|s| !s.is_empty())?;
    let plain = s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    if !plain {
        errs.push(FieldError::new(
            o.at("account_ref"),
            FieldErrorCode::InvalidValue,
            "use a short non-secret name: letters, digits, `.`, `-` and `_`",
        ));
        return None;
    }
    Some(s)
}

/// Validates with the built-in registry and placeholder ids: what the browser
/// form runs before it sends anything.
pub fn check_profile(v: &Value, intent: Intent) -> Vec<FieldError> {
    let mut n = 0;
    let mut placeholder = || {
        n += 1;
        format!("new-{n}")
    };
    read_profile(v, intent, &builtin_class_of, &mut placeholder)
        .err()
        .unwrap_or_default()
}

/// The preview of one class policy: its delays and the sentence describing it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SchedulePreview {
    pub retry_delays_seconds: Vec<u64>,
    pub max_wait_seconds: Option<u32>,
    pub on_exhausted: String,
    pub summary: String,
}

impl SchedulePreview {
    pub fn of(p: &crate::policy::ClassPolicy) -> Self {
        SchedulePreview {
            retry_delays_seconds: retry_schedule(&p.retry),
            max_wait_seconds: p
                .wait_for_reset
                .enabled
                .then_some(p.wait_for_reset.max_wait_seconds),
            on_exhausted: p.on_exhausted.as_str().to_string(),
            summary: describe(p),
        }
    }
}

/// Preview of both classes of one candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CandidatePreview {
    pub candidate_id: String,
    pub transient: SchedulePreview,
    pub hard: SchedulePreview,
}

/// The answer of `POST /api/v1/profiles/validate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ValidationReport {
    pub name: String,
    pub prefer: Prefer,
    pub candidates: Vec<Candidate>,
    pub preview: Vec<CandidatePreview>,
}

impl ValidationReport {
    pub fn of(draft: &ProfileDraft) -> Self {
        ValidationReport {
            name: draft.name.clone(),
            prefer: draft.prefer,
            candidates: draft.candidates.clone(),
            preview: draft
                .candidates
                .iter()
                .map(|c| CandidatePreview {
                    candidate_id: c.id.clone(),
                    transient: SchedulePreview::of(&c.policy.transient),
                    hard: SchedulePreview::of(&c.policy.hard),
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ids() -> impl FnMut() -> String {
        let mut n = 0;
        move || {
            n += 1;
            format!("c{n}")
        }
    }

    fn read(v: Value, intent: Intent) -> Result<ProfileDraft, Vec<FieldError>> {
        read_profile(&v, intent, &builtin_class_of, &mut ids())
    }

    #[test]
    fn reads_a_minimal_profile_with_default_policies() {
        let d = read(
            json!({"name": " Team ", "candidates": [{"label": "Claude", "agent": "claude-code"}]}),
            Intent::Create,
        )
        .unwrap();
        assert_eq!(d.name, "Team");
        assert_eq!(d.candidates[0].id, "c1");
        assert_eq!(d.candidates[0].policy, CandidatePolicy::default());
    }

    #[test]
    fn errors_carry_candidate_paths() {
        let errs = read(
            json!({"name": "", "revision": 1, "candidates": [
                {"label": "A", "agent": "x"},
                {"label": "B", "agent": "y", "policy": {"version": 1,
                    "transient": {"retry": {"enabled": false}, "wait_for_reset": {"enabled": false}, "on_exhausted": "skip"},
                    "hard": {"retry": {"enabled": true, "max_retries": 0, "initial_interval_seconds": 5}, "wait_for_reset": {"enabled": false}, "on_exhausted": "stop"}}}
            ]}),
            Intent::Update,
        )
        .unwrap_err();
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            ["name", "candidates[1].policy.hard.retry.max_retries"]
        );
    }

    #[test]
    fn updates_need_a_revision_and_ids_must_be_unique() {
        let errs = read(
            json!({"name": "n", "candidates": [{"id": "a", "label": "A", "agent": "x"}, {"id": "a", "label": "B", "agent": "x"}]}),
            Intent::Update,
        )
        .unwrap_err();
        let codes: Vec<(&str, FieldErrorCode)> =
            errs.iter().map(|e| (e.field.as_str(), e.code)).collect();
        assert_eq!(
            codes,
            [
                ("revision", FieldErrorCode::Required),
                ("candidates[1].id", FieldErrorCode::Duplicate)
            ]
        );
    }

    #[test]
    fn rejects_empty_candidate_lists_and_unknown_fields() {
        let errs = read(
            json!({"name": "n", "candidates": [], "owner": "me"}),
            Intent::Create,
        )
        .unwrap_err();
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["owner", "candidates"]);
    }

    fn profile(ids: &[&str]) -> Profile {
        let candidates: Vec<Value> = ids
            .iter()
            .map(|id| json!({"id": id, "label": id, "agent": "a"}))
            .collect();
        let draft = read(
            json!({"name": "p", "candidates": candidates}),
            Intent::Create,
        )
        .unwrap();
        Profile {
            id: "p".into(),
            name: draft.name,
            revision: 1,
            prefer: draft.prefer,
            candidates: draft.candidates,
            configuration_error: None,
            created_at: chrono::DateTime::default(),
            updated_at: chrono::DateTime::default(),
        }
    }

    #[test]
    fn next_eligible_wraps_and_skips_exclusions() {
        let p = profile(&["a", "b", "c"]);
        let ex = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let next = |p: &Profile, current: &str, excluded: &[&str]| {
            p.next_eligible(current, &ex(excluded)).map(|(i, _)| i)
        };
        assert_eq!(next(&p, "a", &["a"]), Some(1));
        assert_eq!(next(&p, "c", &["c"]), Some(0));
        assert_eq!(next(&p, "b", &["a", "b"]), Some(2));
        assert_eq!(next(&p, "c", &["a", "b", "c"]), None);
        assert_eq!(next(&profile(&["solo"]), "solo", &["solo"]), None);
        // A candidate removed from the profile: start from the top.
        assert_eq!(next(&p, "gone", &[]), Some(0));
    }

    #[test]
    fn an_account_ref_is_optional_and_a_plain_name() {
        let with = |a: Value| {
            read(
                json!({"name": "n", "candidates": [{"label": "A", "agent": "x", "account_ref": a}]}),
                Intent::Create,
            )
        };
        let account = |a: Value| with(a).map(|d| d.candidates[0].account_ref.clone());
        assert_eq!(account(json!("team-a")), Ok(Some("team-a".into())));
        assert_eq!(account(json!(" ")), Ok(None));
        assert_eq!(account(Value::Null), Ok(None));
        let d = read(
            json!({"name": "n", "candidates": [{"label": "A", "agent": "x"}]}),
            Intent::Create,
        )
        .unwrap();
        assert_eq!(d.candidates[0].account_ref, None);
        // Absent stays absent on the wire: older clients see no new field.
        let wire = serde_json::to_value(&d.candidates[0]).unwrap();
        assert!(wire.get("account_ref").is_none());
        for bad in [json!("me@example.com"), json!(42)] {
            let errs = with(bad).unwrap_err();
            assert_eq!(errs[0].field, "candidates[0].account_ref");
        }
    }

    #[test]
    fn preview_shows_the_schedule() {
        let d = read(
            json!({"name": "n", "candidates": [{"label": "A", "agent": "x", "policy": "retry_same"}]}),
            Intent::Create,
        )
        .unwrap();
        let r = ValidationReport::of(&d);
        assert_eq!(r.preview[0].transient.retry_delays_seconds, vec![5]);
        assert_eq!(
            r.preview[0].hard.summary,
            "Retry after 5 s, then stop for manual recovery."
        );
    }
}
