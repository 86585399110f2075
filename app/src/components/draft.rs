//! The editable state of a profile form. Inputs hold text, so what a person
//! types survives until they fix it; [`ProfileDraft::to_json`] turns it into
//! the JSON body the API takes, and the shared validator judges that body —
//! the same code, paths and messages as the server.

use domain::policy::{ClassPolicy, OnExhausted, PolicyClass};
use domain::profile::{Candidate, Prefer, Profile};
use leptos::prelude::*;
use serde_json::Value;

/// A unit a duration input can be expressed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Seconds,
    Minutes,
    Hours,
    Days,
}

impl Unit {
    pub fn seconds(self) -> u64 {
        match self {
            Unit::Seconds => 1,
            Unit::Minutes => 60,
            Unit::Hours => 3_600,
            Unit::Days => 86_400,
        }
    }

    pub fn key(self) -> &'static str {
        match self {
            Unit::Seconds => "seconds",
            Unit::Minutes => "minutes",
            Unit::Hours => "hours",
            Unit::Days => "days",
        }
    }

    pub fn parse(s: &str) -> Unit {
        match s {
            "minutes" => Unit::Minutes,
            "hours" => Unit::Hours,
            "days" => Unit::Days,
            _ => Unit::Seconds,
        }
    }
}

pub const INTERVAL_UNITS: &[Unit] = &[Unit::Seconds, Unit::Minutes, Unit::Hours];
pub const WAIT_UNITS: &[Unit] = &[Unit::Seconds, Unit::Minutes, Unit::Hours, Unit::Days];

/// A number input with a unit select.
#[derive(Debug, Clone, Copy)]
pub struct DurationDraft {
    pub amount: RwSignal<String>,
    pub unit: RwSignal<Unit>,
}

impl DurationDraft {
    /// Shows `seconds` in the largest of `units` that divides it evenly;
    /// zero (a disabled section) shows `fallback` instead.
    pub fn new(seconds: u32, fallback: (u32, Unit), units: &[Unit]) -> Self {
        let (amount, unit) = if seconds == 0 {
            fallback
        } else {
            let unit = units
                .iter()
                .rev()
                .copied()
                .find(|u| seconds as u64 % u.seconds() == 0)
                .unwrap_or(Unit::Seconds);
            ((seconds as u64 / unit.seconds()) as u32, unit)
        };
        DurationDraft {
            amount: RwSignal::new(amount.to_string()),
            unit: RwSignal::new(unit),
        }
    }

    /// Seconds as JSON: a number when the text is one, otherwise the text
    /// itself so the validator reports it as the wrong type.
    pub fn to_json(&self) -> Value {
        let unit = self.unit.get().seconds() as f64;
        match number(&self.amount.get()) {
            Value::Number(n) => {
                let seconds = n.as_f64().unwrap_or(f64::NAN) * unit;
                json_number(seconds)
            }
            other => other,
        }
    }
}

fn json_number(f: f64) -> Value {
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e15 {
        Value::from(f as i64)
    } else {
        serde_json::Number::from_f64(f)
            .map(Value::Number)
            .unwrap_or(Value::String(f.to_string()))
    }
}

/// A JSON object of `fields`. Built by hand rather than with `json!`,
/// which turns every value it is given into a `Value` through serde's
/// serializer (a copy of each nested `Value`, and the serializer compiled
/// into the browser bundle).
/// Inserted one by one: collecting would sort them first (a stable sort
/// the bundle has no other use for).
fn object(fields: Vec<(&'static str, Value)>) -> Value {
    let mut map = serde_json::Map::new();
    for (key, value) in fields {
        map.insert(key.to_string(), value);
    }
    Value::Object(map)
}

/// Text → JSON number; empty → null (required); anything else → the text.
pub fn number(text: &str) -> Value {
    let t = text.trim();
    if t.is_empty() {
        return Value::Null;
    }
    match finite_number(t) {
        Some(f) => json_number(f),
        None => Value::String(t.to_string()),
    }
}

/// `t` as a finite number, read as Rust's `f64` parser reads it.
#[cfg(not(feature = "hydrate"))]
fn finite_number(t: &str) -> Option<f64> {
    t.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// In the browser, text Rust's parser takes as a decimal number is read by
/// JavaScript's (correctly rounded, like Rust's): Rust's own carries an
/// 11 KB table of powers of five into the bundle that gzip cannot shrink.
/// Rust's other forms (`inf`, `NaN`) are not finite, so never numbers here.
#[cfg(feature = "hydrate")]
fn finite_number(t: &str) -> Option<f64> {
    if !is_decimal(t) {
        return None;
    }
    Some(js_sys::parse_float(t)).filter(|f| f.is_finite())
}

/// Whether `t` is a decimal number in the grammar of Rust's `f64` parser:
/// an optional sign, digits with an optional point (at least one digit
/// before or after it), and an optional exponent with digits.
#[cfg(any(test, feature = "hydrate"))]
fn is_decimal(t: &str) -> bool {
    let b = t.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    let mut mantissa = digits(&mut i);
    if b.get(i) == Some(&b'.') {
        i += 1;
        mantissa += digits(&mut i);
    }
    if mantissa == 0 {
        return false;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        i += usize::from(matches!(b.get(i), Some(b'+' | b'-')));
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// One class policy being edited.
#[derive(Debug, Clone, Copy)]
pub struct ClassDraft {
    pub class: PolicyClass,
    pub retry_enabled: RwSignal<bool>,
    pub max_retries: RwSignal<String>,
    pub initial: DurationDraft,
    pub wait_enabled: RwSignal<bool>,
    pub max_wait: DurationDraft,
    pub on_exhausted: RwSignal<OnExhausted>,
}

impl ClassDraft {
    pub fn new(class: PolicyClass, p: &ClassPolicy) -> Self {
        let max_retries = if p.retry.enabled {
            p.retry.max_retries
        } else {
            3
        };
        ClassDraft {
            class,
            retry_enabled: RwSignal::new(p.retry.enabled),
            max_retries: RwSignal::new(max_retries.to_string()),
            initial: DurationDraft::new(
                p.retry.initial_interval_seconds,
                (5, Unit::Seconds),
                INTERVAL_UNITS,
            ),
            wait_enabled: RwSignal::new(p.wait_for_reset.enabled),
            max_wait: DurationDraft::new(
                p.wait_for_reset.max_wait_seconds,
                (5, Unit::Minutes),
                WAIT_UNITS,
            ),
            on_exhausted: RwSignal::new(p.on_exhausted),
        }
    }

    /// The class policy as the API takes it. Disabled sections send zeros.
    pub fn to_json(&self) -> Value {
        let retry = self.retry_enabled.get();
        let wait = self.wait_enabled.get();
        let zero = || Value::from(0);
        object(vec![
            (
                "retry",
                object(vec![
                    ("enabled", Value::Bool(retry)),
                    (
                        "max_retries",
                        if retry {
                            number(&self.max_retries.get())
                        } else {
                            zero()
                        },
                    ),
                    (
                        "initial_interval_seconds",
                        if retry {
                            self.initial.to_json()
                        } else {
                            zero()
                        },
                    ),
                ]),
            ),
            (
                "wait_for_reset",
                object(vec![
                    ("enabled", Value::Bool(wait)),
                    (
                        "max_wait_seconds",
                        if wait {
                            self.max_wait.to_json()
                        } else {
                            zero()
                        },
                    ),
                ]),
            ),
            (
                "on_exhausted",
                Value::from(self.on_exhausted.get().as_str()),
            ),
        ])
    }
}

/// Keys of rows made in the browser. Rows rendered by the server (a loaded
/// profile's rows, keyed by index, and the first row of a new profile,
/// keyed `FIRST_BLANK_KEY`) never use the counter, so server and browser
/// agree on every id the page was rendered with, and a row added later can
/// never reuse one.
static NEXT_KEY: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
const FIRST_BLANK_KEY: u64 = 1_000_000;

/// One candidate being edited. `key` identifies the row across reorders.
#[derive(Debug, Clone)]
pub struct CandidateDraft {
    pub key: u64,
    pub id: Option<String>,
    pub label: RwSignal<String>,
    pub agent: RwSignal<String>,
    pub provider_id: RwSignal<String>,
    pub model_id: RwSignal<String>,
    pub profile_ref: RwSignal<String>,
    /// The non-secret account name; blank sends none.
    pub account_ref: RwSignal<String>,
    pub transient: ClassDraft,
    pub hard: ClassDraft,
    pub expanded: RwSignal<bool>,
}

impl CandidateDraft {
    pub fn from_candidate(c: &Candidate, key: u64) -> Self {
        CandidateDraft {
            key,
            id: Some(c.id.clone()),
            label: RwSignal::new(c.label.clone()),
            agent: RwSignal::new(c.agent.clone()),
            provider_id: RwSignal::new(c.provider_id.clone()),
            model_id: RwSignal::new(c.model_id.clone()),
            profile_ref: RwSignal::new(c.profile_ref.clone()),
            account_ref: RwSignal::new(c.account_ref.clone().unwrap_or_default()),
            transient: ClassDraft::new(PolicyClass::Transient, &c.policy.transient),
            hard: ClassDraft::new(PolicyClass::Hard, &c.policy.hard),
            expanded: RwSignal::new(false),
        }
    }

    /// A fresh candidate, expanded so its fields are ready to fill in.
    /// Keys of new rows come from a counter; rows loaded from a profile use
    /// their index, so the server and the browser render the same markup.
    pub fn blank() -> Self {
        let key = FIRST_BLANK_KEY + NEXT_KEY.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        CandidateDraft::blank_with_key(key)
    }

    fn blank_with_key(key: u64) -> Self {
        let policy = domain::policy::CandidatePolicy::default();
        CandidateDraft {
            key,
            id: None,
            label: RwSignal::new(String::new()),
            agent: RwSignal::new(String::new()),
            provider_id: RwSignal::new(String::new()),
            model_id: RwSignal::new(String::new()),
            profile_ref: RwSignal::new(String::new()),
            account_ref: RwSignal::new(String::new()),
            transient: ClassDraft::new(PolicyClass::Transient, &policy.transient),
            hard: ClassDraft::new(PolicyClass::Hard, &policy.hard),
            expanded: RwSignal::new(true),
        }
    }

    pub fn class(&self, class: PolicyClass) -> ClassDraft {
        match class {
            PolicyClass::Transient => self.transient,
            PolicyClass::Hard => self.hard,
        }
    }

    pub fn to_json(&self) -> Value {
        let mut fields = vec![
            ("label", Value::String(self.label.get())),
            ("agent", Value::String(self.agent.get())),
            ("provider_id", Value::String(self.provider_id.get())),
            ("model_id", Value::String(self.model_id.get())),
            ("profile_ref", Value::String(self.profile_ref.get())),
            (
                "policy",
                object(vec![
                    (
                        "version",
                        Value::from(domain::policy::limits::POLICY_VERSION),
                    ),
                    ("transient", self.transient.to_json()),
                    ("hard", self.hard.to_json()),
                ]),
            ),
        ];
        if let Some(id) = &self.id {
            fields.push(("id", Value::String(id.clone())));
        }
        let account = self.account_ref.get();
        if !account.trim().is_empty() {
            fields.push(("account_ref", Value::String(account)));
        }
        object(fields)
    }
}

/// The whole form.
#[derive(Debug, Clone, Copy)]
pub struct ProfileDraft {
    pub name: RwSignal<String>,
    pub revision: RwSignal<Option<i64>>,
    /// Where a route goes after a success: what the profile has, always
    /// sent, so saving never changes it behind the editor's back.
    pub prefer: RwSignal<Prefer>,
    pub candidates: RwSignal<Vec<CandidateDraft>>,
}

impl ProfileDraft {
    pub fn from_profile(p: &Profile) -> Self {
        ProfileDraft {
            name: RwSignal::new(p.name.clone()),
            revision: RwSignal::new(Some(p.revision)),
            prefer: RwSignal::new(p.prefer),
            candidates: RwSignal::new(
                p.candidates
                    .iter()
                    .enumerate()
                    .map(|(i, c)| CandidateDraft::from_candidate(c, i as u64))
                    .collect(),
            ),
        }
    }

    pub fn blank() -> Self {
        ProfileDraft {
            name: RwSignal::new(String::new()),
            revision: RwSignal::new(None),
            prefer: RwSignal::new(Prefer::default()),
            candidates: RwSignal::new(vec![CandidateDraft::blank_with_key(FIRST_BLANK_KEY)]),
        }
    }

    /// Loads a saved (or authoritative) profile into the existing form.
    pub fn reset_to(&self, p: &Profile) {
        self.name.set(p.name.clone());
        self.revision.set(Some(p.revision));
        self.prefer.set(p.prefer);
        self.candidates.set(
            p.candidates
                .iter()
                .map(|c| {
                    let key = FIRST_BLANK_KEY
                        + NEXT_KEY.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    CandidateDraft::from_candidate(c, key)
                })
                .collect(),
        );
    }

    pub fn to_json(&self) -> Value {
        let mut fields = vec![
            ("name", Value::String(self.name.get())),
            ("prefer", Value::from(self.prefer.get().as_str())),
            (
                "candidates",
                Value::Array(
                    self.candidates
                        .get()
                        .iter()
                        .map(CandidateDraft::to_json)
                        .collect(),
                ),
            ),
        ];
        if let Some(r) = self.revision.get() {
            fields.push(("revision", Value::from(r)));
        }
        object(fields)
    }

    /// Moves the candidate with `key` by `delta` places, if it can move.
    pub fn shift(&self, key: u64, delta: isize) {
        self.candidates.update(|list| {
            if let Some(i) = list.iter().position(|c| c.key == key) {
                let j = i as isize + delta;
                if j >= 0 && (j as usize) < list.len() {
                    list.swap(i, j as usize);
                }
            }
        });
    }

    pub fn remove(&self, key: u64) {
        self.candidates.update(|list| list.retain(|c| c.key != key));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The form's body, as `json!` would have written it.
    #[test]
    fn bodies_are_what_the_api_takes() {
        let owner = Owner::new();
        owner.with(|| {
            let on = |retries: u32| {
                json!({
                    "retry": {"enabled": true, "max_retries": retries, "initial_interval_seconds": 90},
                    "wait_for_reset": {"enabled": false, "max_wait_seconds": 0},
                    "on_exhausted": "stop",
                })
            };
            let profile: Profile = serde_json::from_value(json!({
                "id": "p_1",
                "name": "Main",
                "revision": 4,
                "prefer": "stay",
                "candidates": [{
                    "id": "c_1", "label": "Claude", "agent": "claude-code",
                    "provider_id": "anthropic", "model_id": "sonnet", "profile_ref": "r",
                    "account_ref": "team-a",
                    "policy": {"version": 1, "transient": on(3), "hard": on(2)},
                }],
                "created_at": "2026-11-30T12:00:00Z",
                "updated_at": "2026-11-30T12:00:00Z",
            }))
            .unwrap();
            let draft = ProfileDraft::from_profile(&profile);
            draft.candidates.with_untracked(|c| {
                c[0].hard.wait_enabled.set(true);
                c[0].hard.max_wait.amount.set("x".into());
            });
            let mut hard = on(2);
            hard["wait_for_reset"] = json!({"enabled": true, "max_wait_seconds": "x"});
            assert_eq!(
                draft.to_json(),
                json!({
                    "name": "Main",
                    "revision": 4,
                    "prefer": "stay",
                    "candidates": [{
                        "id": "c_1", "label": "Claude", "agent": "claude-code",
                        "provider_id": "anthropic", "model_id": "sonnet", "profile_ref": "r",
                        "account_ref": "team-a",
                        "policy": {"version": 1, "transient": on(3), "hard": hard},
                    }],
                })
            );
            let blank = ProfileDraft::blank();
            let off = json!({
                "retry": {"enabled": false, "max_retries": 0, "initial_interval_seconds": 0},
                "wait_for_reset": {"enabled": false, "max_wait_seconds": 0},
                "on_exhausted": "skip",
            });
            assert_eq!(
                blank.to_json(),
                json!({
                    "name": "",
                    "prefer": "first_eligible",
                    "candidates": [{
                        "label": "", "agent": "", "provider_id": "", "model_id": "",
                        "profile_ref": "",
                        "policy": {"version": 1, "transient": off, "hard": off},
                    }],
                })
            );
        });
    }

    #[test]
    fn numbers_keep_bad_text_for_the_validator() {
        assert_eq!(number(" 3 "), json!(3));
        assert_eq!(number("2.5"), json!(2.5));
        assert_eq!(number(""), Value::Null);
        assert_eq!(number("three"), json!("three"));
        assert_eq!(number("inf"), json!("inf"));
    }

    #[test]
    fn decimals_are_what_rusts_parser_reads_as_digits() {
        for t in [
            "3", "-3", "+3", "2.5", ".5", "5.", "-.5", "1e5", "1E+5", "1.e-3", "007", "1e400",
        ] {
            assert!(is_decimal(t), "{t}");
            assert!(t.parse::<f64>().is_ok(), "{t}");
        }
        for t in [
            "", ".", "+", "e5", "1e", "1e+", "1..2", "1.2.3", "--1", "1 ", "0x10", "1_0",
        ] {
            assert!(!is_decimal(t), "{t}");
            assert!(t.parse::<f64>().is_err(), "{t}");
        }
        // Rust's words for infinity and NaN are numbers it reads, but never
        // finite ones: the form keeps them as text either way.
        for t in ["inf", "-Infinity", "NaN"] {
            assert!(!is_decimal(t), "{t}");
            assert!(!t.parse::<f64>().unwrap().is_finite(), "{t}");
        }
    }

    proptest::proptest! {
        #[test]
        fn decimals_agree_with_rusts_parser(t in "[-+0-9.eE]{0,8}") {
            proptest::prop_assert_eq!(is_decimal(&t), t.parse::<f64>().is_ok());
        }
    }

    #[test]
    fn durations_pick_the_largest_even_unit() {
        let owner = Owner::new();
        owner.with(|| {
            let d = DurationDraft::new(7_200, (5, Unit::Seconds), WAIT_UNITS);
            assert_eq!(
                (d.amount.get_untracked(), d.unit.get_untracked()),
                ("2".to_string(), Unit::Hours)
            );
            let d = DurationDraft::new(90, (5, Unit::Seconds), INTERVAL_UNITS);
            assert_eq!(
                (d.amount.get_untracked(), d.unit.get_untracked()),
                ("90".to_string(), Unit::Seconds)
            );
            d.unit.set(Unit::Minutes);
            d.amount.set("1.5".into());
            assert_eq!(d.to_json(), json!(90));
        });
    }
}
