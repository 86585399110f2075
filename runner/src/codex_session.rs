//! Codex's session file, read after a turn it reported as failed: where
//! `codex exec --json` prints only prose, the file keeps the error's
//! `codex_error_info` and the provider's rate-limit windows as data (see
//! [`crate::format::codex`]). Reading it is best effort — no file, no
//! match, an unreadable or foreign format: the prose alone decides, as
//! before.
//!
//! Where: `$CODEX_HOME` (the agent's environment first, then the
//! runner's; relative to the agent's working directory), else
//! `$HOME/.codex`; then `sessions/YYYY/MM/DD/rollout-<time>-<thread
//! id>.jsonl`, dated the day the session started in Codex's local time.

use super::format::codex::rollout_failure;
use super::format::ErrorReport;
use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Bytes read from the end of the file: the failed turn's last events are
/// there, and a long session's file may be large.
const TAIL_BYTES: u64 = 512 * 1024;
/// Day folders looked through when the session is not from today or
/// yesterday (a resumed one), newest first.
const MAX_DAYS: usize = 400;

/// The failure of the thread's last turn as Codex recorded it.
pub fn failure(
    env: &BTreeMap<String, String>,
    cwd: Option<&Path>,
    thread_id: &str,
) -> Option<ErrorReport> {
    let file = find(&codex_home(env, cwd)?, thread_id)?;
    rollout_failure(&tail(&file)?)
}

fn var(env: &BTreeMap<String, String>, name: &str) -> Option<String> {
    env.get(name)
        .cloned()
        .or_else(|| std::env::var(name).ok())
        .filter(|v| !v.is_empty())
}

fn codex_home(env: &BTreeMap<String, String>, cwd: Option<&Path>) -> Option<PathBuf> {
    if let Some(home) = var(env, "CODEX_HOME") {
        let home = PathBuf::from(home);
        return Some(match cwd {
            Some(cwd) if home.is_relative() => cwd.join(home),
            _ => home,
        });
    }
    var(env, "HOME").map(|h| Path::new(&h).join(".codex"))
}

/// The thread's session file. The id comes from the agent's output, so it
/// must look like one (hex and dashes) before it goes near a path.
fn find(codex_home: &Path, thread_id: &str) -> Option<PathBuf> {
    let valid = !thread_id.is_empty()
        && thread_id.len() <= 64
        && thread_id.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
    if !valid {
        return None;
    }
    let sessions = codex_home.join("sessions");
    let suffix = format!("-{thread_id}.jsonl");
    let now = chrono::Utc::now();
    let mut recent: Vec<PathBuf> = Vec::new();
    for day in [now, now - chrono::Duration::days(1)] {
        for date in [
            day.date_naive(),
            day.with_timezone(&chrono::Local).date_naive(),
        ] {
            let dir = sessions.join(date.format("%Y/%m/%d").to_string());
            if !recent.contains(&dir) {
                recent.push(dir);
            }
        }
    }
    recent
        .iter()
        .find_map(|dir| in_dir(dir, &suffix))
        .or_else(|| {
            day_dirs(&sessions)
                .iter()
                .filter(|d| !recent.contains(d))
                .find_map(|dir| in_dir(dir, &suffix))
        })
}

fn in_dir(dir: &Path, suffix: &str) -> Option<PathBuf> {
    std::fs::read_dir(dir).ok()?.flatten().find_map(|e| {
        let name = e.file_name();
        let name = name.to_str()?;
        (name.starts_with("rollout-") && name.ends_with(suffix)).then(|| e.path())
    })
}

/// `sessions/YYYY/MM/DD` folders, newest first, at most [`MAX_DAYS`].
fn day_dirs(sessions: &Path) -> Vec<PathBuf> {
    let sorted = |dir: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|r| {
                r.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.is_dir())
                    .collect()
            })
            .unwrap_or_default();
        v.sort_unstable_by(|a, b| b.cmp(a));
        v
    };
    sorted(sessions)
        .iter()
        .flat_map(|y| sorted(y))
        .flat_map(|m| sorted(&m))
        .take(MAX_DAYS)
        .collect()
}

/// The file's last [`TAIL_BYTES`], whole lines only.
fn tail(file: &Path) -> Option<String> {
    let mut f = std::fs::File::open(file).ok()?;
    let len = f.metadata().ok()?.len();
    let start = len.saturating_sub(TAIL_BYTES);
    f.seek(SeekFrom::Start(start)).ok()?;
    let mut bytes = Vec::new();
    f.take(TAIL_BYTES).read_to_end(&mut bytes).ok()?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    Some(if start > 0 {
        // The first line was cut by the seek.
        text.split_once('\n')
            .map(|(_, rest)| rest.to_string())
            .unwrap_or_default()
    } else {
        text
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "kandev-codex-session-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    const FAILED: &str = r#"{"type":"turn_context","payload":{}}
{"type":"event_msg","payload":{"type":"token_count","rate_limits":{"primary":{"used_percent":100.0,"window_minutes":300,"resets_at":1796040600}}}}
{"type":"event_msg","payload":{"type":"task_complete","error":{"message":"You've hit your usage limit.","codex_error_info":"usage_limit_exceeded"}}}
"#;

    #[test]
    fn finds_the_threads_file_under_codex_home() {
        let home = scratch("find");
        let id = "01a25076-dad1-7c21-979d-94e9c4e031f7";
        let today = chrono::Local::now()
            .date_naive()
            .format("%Y/%m/%d")
            .to_string();
        let old = home.join("sessions/2025/01/02");
        for dir in [home.join("sessions").join(&today), old.clone()] {
            std::fs::create_dir_all(&dir).expect("dir");
        }
        std::fs::write(
            home.join("sessions")
                .join(&today)
                .join("rollout-x-01a25076-0000-7000-8000-000000000000.jsonl"),
            "another thread",
        )
        .expect("write");
        std::fs::write(
            old.join(format!("rollout-2025-01-02T10-00-00-{id}.jsonl")),
            FAILED,
        )
        .expect("write");
        let env = BTreeMap::from([("CODEX_HOME".to_string(), home.display().to_string())]);
        // An old (resumed) session is found by the walk.
        let r = failure(&env, None, id).expect("the failure");
        assert!(r.body.as_deref().is_some_and(|b| b.contains("1796040600")));
        // Relative to the agent's directory.
        let rel = BTreeMap::from([("CODEX_HOME".to_string(), "codex".to_string())]);
        assert_eq!(
            codex_home(&rel, Some(Path::new("/work/a"))),
            Some(PathBuf::from("/work/a/codex"))
        );
        // An id that is not one never reaches a path.
        assert_eq!(failure(&env, None, "../../etc/passwd"), None);
        assert_eq!(failure(&env, None, ""), None);
        assert_eq!(failure(&env, None, "ffff"), None, "no such thread");
        let _ = std::fs::remove_dir_all(&home);
    }

    #[test]
    fn a_long_file_is_read_from_its_end() {
        let home = scratch("tail");
        std::fs::create_dir_all(&home).expect("dir");
        let file = home.join("rollout.jsonl");
        let filler = format!(
            "{{\"type\":\"response_item\",\"payload\":\"{}\"}}\n",
            "x".repeat(1000)
        );
        std::fs::write(&file, filler.repeat(600) + FAILED).expect("write");
        let text = tail(&file).expect("tail");
        assert!(text.len() as u64 <= TAIL_BYTES);
        assert!(text.starts_with('{'), "whole lines only");
        assert!(rollout_failure(&text).is_some());
        let _ = std::fs::remove_dir_all(&home);
    }
}
