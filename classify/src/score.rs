//! Scoring the classifier against labelled corpora (the shared corpus
//! format: `{"id", "source_url", "note", "evidence", "expect": {"class",
//! "code", "accept", "retry_after_s", "reset_at", "must_not_leak"}}`, one
//! case per line).
//!
//! The measures are those of the shared `score.py`, so figures here and
//! there agree: exact class and code (an `accept` alternative counts),
//! false recoveries (a case whose label allows no recovering class given
//! `transient` or `hard`: the one mistake the product must not make),
//! missed recoveries, timing within max(1 s, 1 %) of the labelled deadline,
//! leaks (a `must_not_leak` string anywhere in the output line) and missing
//! output fields. One addition: a hint given where the label has none, on a
//! case whose code is right and recovering, is counted as *invented* and
//! fails the timing gate like a wrong hint (a wait nobody asked for is a
//! wrong wait).
//!
//! Every file is a family (`dev-apis.jsonl` → `apis`); figures are given
//! per family and for all files together, and per provider (the envelope's
//! `provider_id`; providers with few cases are summed as "other"). One runner serves the test
//! command (`server/tests/it/classify_corpus.rs`) and `kandev-recovery
//! catalogue score`.

use super::catalogue::Catalogue;
use super::classifier::classify_at;
use super::evidence::Evidence;
use chrono::{DateTime, Duration, Utc};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// Reference time of every corpus case (the shared corpus README fixes it);
/// used when a case's envelope has no `occurred_at`.
pub const CORPUS_NOW: &str = "2026-11-30T12:00:00Z";

/// The thresholds a corpus must meet.
#[derive(Debug, Clone, Copy)]
pub struct Gate {
    pub min_exact: f64,
    pub max_false_recoveries: usize,
    pub min_timing: f64,
    pub max_leaks: usize,
}

impl Default for Gate {
    /// The product's gate: ≥ 98 % exact, no false recovery, ≥ 95 % of
    /// timing right, no leak.
    fn default() -> Self {
        Gate {
            min_exact: 0.98,
            max_false_recoveries: 0,
            min_timing: 0.95,
            max_leaks: 0,
        }
    }
}

/// Why a corpus could not be scored at all.
#[derive(Debug, thiserror::Error)]
pub enum ScoreError {
    #[error("{path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Case {
        path: String,
        line: usize,
        message: String,
    },
    #[error("{0}: no cases")]
    Empty(String),
    #[error("no corpus files given (or none found in {0})")]
    NoFiles(String),
}

/// One labelled case.
#[derive(Debug, Clone)]
pub struct Case {
    pub id: String,
    pub family: String,
    pub evidence: Evidence,
    pub want: (String, String),
    pub accept: Vec<(String, String)>,
    pub deadline: Option<DateTime<Utc>>,
    pub must_not_leak: Vec<String>,
}

/// A labelled deadline and the one the classifier gave, when they differ.
pub type TimingMiss = (Option<DateTime<Utc>>, Option<DateTime<Utc>>);

/// What went wrong with one case.
#[derive(Debug, Clone)]
pub struct Miss {
    pub id: String,
    pub family: String,
    pub want: (String, String),
    pub got: (String, String),
    pub rule: String,
    pub excerpt: String,
    pub false_recovery: bool,
    pub leaked: Vec<String>,
    /// Labelled and found deadlines when timing is wrong.
    pub timing: Option<TimingMiss>,
}

/// Counts for one family (or all of them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    pub cases: usize,
    pub exact: usize,
    pub false_recoveries: usize,
    pub missed_recoveries: usize,
    pub timing_labelled: usize,
    pub timing_ok: usize,
    pub timing_invented: usize,
    pub leaks: usize,
    pub missing_fields: usize,
}

impl Tally {
    pub fn exact_rate(&self) -> f64 {
        ratio(self.exact, self.cases)
    }

    /// Right hints over labelled hints plus invented ones.
    pub fn timing_rate(&self) -> f64 {
        let n = self.timing_labelled + self.timing_invented;
        if n == 0 {
            1.0
        } else {
            ratio(self.timing_ok, n)
        }
    }

    fn add(&mut self, o: &Tally) {
        self.cases += o.cases;
        self.exact += o.exact;
        self.false_recoveries += o.false_recoveries;
        self.missed_recoveries += o.missed_recoveries;
        self.timing_labelled += o.timing_labelled;
        self.timing_ok += o.timing_ok;
        self.timing_invented += o.timing_invented;
        self.leaks += o.leaks;
        self.missing_fields += o.missing_fields;
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Figures per family and overall, and every miss.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub families: BTreeMap<String, Tally>,
    /// The same cases by the envelope's `provider_id` (`-` when none).
    pub providers: BTreeMap<String, Tally>,
    pub misses: Vec<Miss>,
}

impl Report {
    pub fn total(&self) -> Tally {
        let mut t = Tally::default();
        for f in self.families.values() {
            t.add(f);
        }
        t
    }

    /// Every threshold the overall figures miss (empty when the gate passes).
    pub fn failures(&self, gate: &Gate) -> Vec<String> {
        let t = self.total();
        let mut out = Vec::new();
        if t.cases == 0 {
            out.push("no cases".to_owned());
            return out;
        }
        if t.exact_rate() < gate.min_exact {
            out.push(format!("exact {:.3} < {}", t.exact_rate(), gate.min_exact));
        }
        if t.false_recoveries > gate.max_false_recoveries {
            out.push(format!(
                "false recoveries {} > {}",
                t.false_recoveries, gate.max_false_recoveries
            ));
        }
        if t.timing_rate() < gate.min_timing {
            out.push(format!(
                "timing {}/{} (+{} invented) = {:.3} < {}",
                t.timing_ok,
                t.timing_labelled,
                t.timing_invented,
                t.timing_rate(),
                gate.min_timing
            ));
        }
        if t.leaks > gate.max_leaks {
            out.push(format!("leaks {} > {}", t.leaks, gate.max_leaks));
        }
        if t.missing_fields > 0 {
            out.push(format!("{} outputs miss fields", t.missing_fields));
        }
        out
    }
}

impl fmt::Display for Report {
    /// A table: one row per family, then all.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{:<14} {:>5} {:>7} {:>6} {:>6} {:>9} {:>8} {:>5}",
            "family", "cases", "exact", "false", "missed", "timing", "invented", "leaks"
        )?;
        let row = |f: &mut fmt::Formatter<'_>, name: &str, t: &Tally| {
            writeln!(
                f,
                "{:<14} {:>5} {:>7.3} {:>6} {:>6} {:>9} {:>8} {:>5}",
                name,
                t.cases,
                t.exact_rate(),
                t.false_recoveries,
                t.missed_recoveries,
                format!("{}/{}", t.timing_ok, t.timing_labelled),
                t.timing_invented,
                t.leaks
            )
        };
        for (name, t) in &self.families {
            row(f, name, t)?;
        }
        if self.families.len() > 1 {
            row(f, "all", &self.total())?;
        }
        Ok(())
    }
}

impl Report {
    /// A table of the figures per provider: those with at least
    /// `min_cases` cases, most cases first, then the rest summed as "other".
    pub fn provider_table(&self, min_cases: usize) -> String {
        let mut rows: Vec<(&String, &Tally)> = self
            .providers
            .iter()
            .filter(|(_, t)| t.cases >= min_cases)
            .collect();
        rows.sort_by(|a, b| b.1.cases.cmp(&a.1.cases).then(a.0.cmp(b.0)));
        let mut other = Tally::default();
        let mut others = 0;
        for (_, t) in self.providers.iter().filter(|(_, t)| t.cases < min_cases) {
            other.add(t);
            others += 1;
        }
        let mut out = format!(
            "{:<18} {:>5} {:>7} {:>6} {:>6} {:>9} {:>5}\n",
            "provider", "cases", "exact", "false", "missed", "timing", "leaks"
        );
        let row = |out: &mut String, name: &str, t: &Tally| {
            out.push_str(&format!(
                "{:<18} {:>5} {:>7.3} {:>6} {:>6} {:>9} {:>5}\n",
                name,
                t.cases,
                t.exact_rate(),
                t.false_recoveries,
                t.missed_recoveries,
                format!("{}/{}", t.timing_ok, t.timing_labelled),
                t.leaks
            ));
        };
        for (name, t) in rows {
            row(&mut out, name, t);
        }
        if others > 0 {
            row(&mut out, &format!("other ({others})"), &other);
        }
        out
    }
}

impl fmt::Display for Miss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{}: want {}/{} got {}/{} ({})",
            if self.false_recovery {
                "FALSE RECOVERY "
            } else {
                ""
            },
            self.id,
            self.want.0,
            self.want.1,
            self.got.0,
            self.got.1,
            self.rule
        )?;
        if !self.leaked.is_empty() {
            write!(f, " LEAKED {:?}", self.leaked)?;
        }
        if let Some((want, got)) = &self.timing {
            let show = |t: &Option<DateTime<Utc>>| t.map_or("none".to_owned(), |t| t.to_rfc3339());
            write!(f, " timing want {} got {}", show(want), show(got))?;
        }
        write!(f, "\n      {}", self.excerpt)
    }
}

/// The family a corpus file stands for: its name without `dev-` and the
/// extension.
pub fn family_of(path: &Path) -> String {
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("corpus");
    stem.strip_prefix("dev-").unwrap_or(stem).to_owned()
}

/// Every `*.jsonl` file in `dir`, sorted; an error when there is none.
pub fn corpus_files(dir: &Path) -> Result<Vec<PathBuf>, ScoreError> {
    let entries = std::fs::read_dir(dir).map_err(|source| ScoreError::Read {
        path: dir.display().to_string(),
        source,
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(ScoreError::NoFiles(dir.display().to_string()));
    }
    Ok(files)
}

/// Reads one corpus file. Every line must be a case; a file without cases
/// is an error, so a truncated corpus cannot pass by being empty.
pub fn load(path: &Path) -> Result<Vec<Case>, ScoreError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ScoreError::Read {
        path: name.clone(),
        source,
    })?;
    let family = family_of(path);
    let mut cases = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |message: String| ScoreError::Case {
            path: name.clone(),
            line: n + 1,
            message,
        };
        let v: Value = serde_json::from_str(line).map_err(|e| bad(e.to_string()))?;
        cases.push(case(&v, &family).map_err(bad)?);
    }
    if cases.is_empty() {
        return Err(ScoreError::Empty(name));
    }
    Ok(cases)
}

fn case(v: &Value, family: &str) -> Result<Case, String> {
    let s = |v: &Value| v.as_str().map(str::to_owned);
    let id = s(&v["id"]).ok_or("a case needs an id")?;
    let expect = &v["expect"];
    let want = (
        s(&expect["class"]).ok_or_else(|| format!("{id}: expect.class"))?,
        s(&expect["code"]).ok_or_else(|| format!("{id}: expect.code"))?,
    );
    let accept = expect["accept"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| Some((s(&p[0])?, s(&p[1])?)))
                .collect()
        })
        .unwrap_or_default();
    let evidence = Evidence::from_json_value(&v["evidence"]).map_err(|e| format!("{id}: {e}"))?;
    let must_not_leak = expect["must_not_leak"]
        .as_array()
        .map(|a| a.iter().filter_map(s).filter(|x| !x.is_empty()).collect())
        .unwrap_or_default();
    Ok(Case {
        deadline: deadline(expect, "retry_after_s"),
        id,
        family: family.to_owned(),
        evidence,
        want,
        accept,
        must_not_leak,
    })
}

fn corpus_now() -> DateTime<Utc> {
    CORPUS_NOW.parse().unwrap_or_default()
}

/// The absolute instant a label (or an output) says to wait until: its
/// `reset_at`, else the reference time plus its seconds field.
fn deadline(v: &Value, seconds_key: &str) -> Option<DateTime<Utc>> {
    if let Some(r) = v.get("reset_at").and_then(Value::as_str) {
        return DateTime::parse_from_rfc3339(r)
            .ok()
            .map(|t| t.with_timezone(&Utc));
    }
    let s = v.get(seconds_key).and_then(Value::as_f64)?;
    Some(corpus_now() + Duration::milliseconds((s * 1000.0).round() as i64))
}

/// Output fields every classification must have.
const FIELDS: [&str; 4] = [
    "catalogue_version",
    "classifier_rule",
    "confidence",
    "safe_excerpt",
];

/// Scores `cases` with `catalogue`.
pub fn score(catalogue: &Catalogue, cases: &[Case]) -> Report {
    let now = corpus_now();
    let recovering = |c: &str| c == "transient" || c == "hard";
    let mut report = Report::default();
    for c in cases {
        let out = classify_at(catalogue, &c.evidence, now);
        let line = serde_json::to_string(&out).unwrap_or_default();
        let o: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        let got = (
            o["class"].as_str().unwrap_or("").to_owned(),
            o["code"].as_str().unwrap_or("").to_owned(),
        );
        let mut case = Tally::default();
        let t = &mut case;
        t.cases += 1;
        let ok = got == c.want || c.accept.contains(&got);
        t.exact += usize::from(ok);
        let may_recover = recovering(&c.want.0) || c.accept.iter().any(|(a, _)| recovering(a));
        let false_recovery = recovering(&got.0) && !may_recover;
        t.false_recoveries += usize::from(false_recovery);
        t.missed_recoveries += usize::from(recovering(&c.want.0) && !recovering(&got.0));
        t.missing_fields += usize::from(FIELDS.iter().any(|f| o.get(f).is_none()));
        let leaked: Vec<String> = c
            .must_not_leak
            .iter()
            .filter(|s| line.contains(s.as_str()))
            .cloned()
            .collect();
        t.leaks += usize::from(!leaked.is_empty());
        let got_dl = deadline(&o, "retry_after_seconds");
        let timing_ok = match c.deadline {
            Some(want) => {
                t.timing_labelled += 1;
                let ok = got_dl.is_some_and(|got| {
                    let delta = (got - want).num_milliseconds().abs() as f64 / 1000.0;
                    let span = (want - now).num_milliseconds().abs() as f64 / 1000.0;
                    delta <= f64::max(1.0, 0.01 * span)
                });
                t.timing_ok += usize::from(ok);
                ok
            }
            None if got_dl.is_some() && ok && recovering(&c.want.0) => {
                t.timing_invented += 1;
                false
            }
            None => true,
        };
        report
            .families
            .entry(c.family.clone())
            .or_default()
            .add(&case);
        let provider = c.evidence.provider_id.as_deref().unwrap_or("-");
        report
            .providers
            .entry(provider.to_ascii_lowercase())
            .or_default()
            .add(&case);
        if !ok || !leaked.is_empty() || !timing_ok {
            report.misses.push(Miss {
                id: c.id.clone(),
                family: c.family.clone(),
                want: c.want.clone(),
                got,
                rule: out.classifier_rule.clone(),
                excerpt: out.safe_excerpt.clone(),
                false_recovery,
                leaked,
                timing: (!timing_ok).then_some((c.deadline, got_dl)),
            });
        }
    }
    report
}

/// Loads and scores every file; the first unreadable file is the error.
pub fn score_files(catalogue: &Catalogue, files: &[PathBuf]) -> Result<Report, ScoreError> {
    if files.is_empty() {
        return Err(ScoreError::NoFiles("the arguments".to_owned()));
    }
    let mut cases = Vec::new();
    for f in files {
        cases.extend(load(f)?);
    }
    Ok(score(catalogue, &cases))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case_line(expect: &str, items: &str) -> Case {
        let v: Value = serde_json::from_str(&format!(
            r#"{{"id":"t","evidence":{{"occurred_at":"2026-11-30T12:00:00Z","items":{items}}},"expect":{expect}}}"#
        ))
        .unwrap();
        case(&v, "test").unwrap()
    }

    #[test]
    fn counts_exact_false_recoveries_timing_and_leaks() {
        let cat = Catalogue::builtin();
        let cases = vec![
            // Right, with the right timing.
            case_line(
                r#"{"class":"transient","code":"provider_overloaded","retry_after_s":12}"#,
                r#"[{"kind":"http","status":529,"headers":{"retry-after":"12"},"body":"{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}"}]"#,
            ),
            // A 429 given to a case labelled unknown: a false recovery.
            case_line(
                r#"{"class":"unclassified","code":"unknown"}"#,
                r#"[{"kind":"http","status":429,"body":"slow down"}]"#,
            ),
            // Right code, a hint the label does not have: invented.
            case_line(
                r#"{"class":"transient","code":"rate_limited"}"#,
                r#"[{"kind":"http","status":429,"headers":{"retry-after":"30"},"body":"Too Many Requests"}]"#,
            ),
            // A leak the label names (the excerpt keeps plain words).
            case_line(
                r#"{"class":"unclassified","code":"unknown","must_not_leak":["zebra"]}"#,
                r#"[{"kind":"stderr","lines":["zebra crossing"]}]"#,
            ),
        ];
        let r = score(cat, &cases);
        let t = r.total();
        assert_eq!(t.cases, 4);
        assert_eq!(t.exact, 3, "{:#?}", r.misses);
        assert_eq!(t.false_recoveries, 1);
        assert_eq!(
            (t.timing_ok, t.timing_labelled, t.timing_invented),
            (1, 1, 1)
        );
        assert_eq!(t.leaks, 1);
        let fails = r.failures(&Gate::default());
        assert!(fails.iter().any(|f| f.starts_with("exact")), "{fails:?}");
        assert!(fails.iter().any(|f| f.starts_with("false")), "{fails:?}");
        assert!(fails.iter().any(|f| f.starts_with("timing")), "{fails:?}");
        assert!(fails.iter().any(|f| f.starts_with("leaks")), "{fails:?}");
        assert_eq!(r.misses.len(), 3);
        // The same cases by provider: every case once.
        let by_provider: usize = r.providers.values().map(|t| t.cases).sum();
        assert_eq!(by_provider, 4);
        assert!(r.provider_table(100).contains("other ("));
    }

    #[test]
    fn families_come_from_file_names() {
        assert_eq!(family_of(Path::new("x/dev-apis.jsonl")), "apis");
        assert_eq!(family_of(Path::new("public.jsonl")), "public");
    }

    #[test]
    fn missing_and_empty_corpora_are_errors() {
        let dir = std::env::temp_dir().join(format!("score-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(matches!(corpus_files(&dir), Err(ScoreError::NoFiles(_))));
        let f = dir.join("dev-empty.jsonl");
        std::fs::write(&f, "\n").unwrap();
        assert!(matches!(load(&f), Err(ScoreError::Empty(_))));
        assert!(matches!(
            load(&dir.join("absent.jsonl")),
            Err(ScoreError::Read { .. })
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
