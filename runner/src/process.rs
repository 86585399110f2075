//! The agent's process: started in its own process group with the
//! configured environment and directory, and stopped as a group — the
//! agent's own children included — however the attempt ends. The group
//! matters twice: the terminal's Ctrl-C reaches the runner only (which then
//! decides what to tell the service), and no agent outlives the runner.

use super::config::AgentConfig;
use super::envelope::exit_item as item;
use domain::evidence::Item;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::process::{Child, Command};

/// How long an agent has to exit after SIGTERM before it is killed.
pub const GRACE: Duration = Duration::from_secs(3);

/// The agent group running now, so a second Ctrl-C can stop it before the
/// runner exits at once.
#[derive(Clone, Default)]
pub struct ActiveAgent(Arc<Mutex<Option<Pid>>>);

impl ActiveAgent {
    /// Kills the running agent's group, if any.
    pub fn kill(&self) {
        if let Some(pgid) = self.0.lock().ok().and_then(|g| *g) {
            let _ = killpg(pgid, Signal::SIGKILL);
        }
    }

    fn set(&self, pgid: Option<Pid>) {
        if let Ok(mut g) = self.0.lock() {
            *g = pgid;
        }
    }
}

/// A running agent; dropping it kills whatever is left of its group.
pub struct AgentProcess {
    pub child: Child,
    pgid: Option<Pid>,
    active: ActiveAgent,
}

/// Starts `argv` for `agent`: stdout and stderr piped, stdin as given.
pub fn spawn(
    agent: &AgentConfig,
    argv: &[String],
    cwd: Option<&Path>,
    stdin: Stdio,
    active: &ActiveAgent,
) -> std::io::Result<AgentProcess> {
    let mut command = Command::new(&argv[0]);
    command
        .args(&argv[1..])
        .envs(&agent.env)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(dir) = cwd {
        command.current_dir(dir);
    }
    let child = command.spawn()?;
    let pgid = child.id().map(|id| Pid::from_raw(id as i32));
    active.set(pgid);
    Ok(AgentProcess {
        child,
        pgid,
        active: active.clone(),
    })
}

impl AgentProcess {
    /// Sends `signal` to the whole group.
    pub fn signal(&self, signal: Signal) {
        if let Some(pgid) = self.pgid {
            let _ = killpg(pgid, signal);
        }
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        self.signal(Signal::SIGKILL);
        self.active.set(None);
    }
}

/// How a process ended, as an evidence item: its signal by name, else its
/// exit code.
pub fn exit_item(status: &std::process::ExitStatus) -> Item {
    use std::os::unix::process::ExitStatusExt;
    item(
        status.code().map(i64::from),
        status.signal().map(signal_name),
    )
}

/// `SIGKILL` for 9; numbers nix does not know stay numbers.
pub fn signal_name(n: i32) -> String {
    Signal::try_from(n)
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|_| format!("SIG{n}"))
}

/// The agent's executable could not be started (missing, not executable):
/// the shell's codes for these, 127 and 126.
pub fn launch_failure_exit(e: &std::io::Error) -> Item {
    let code = if e.kind() == std::io::ErrorKind::NotFound {
        127
    } else {
        126
    };
    item(Some(code), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_have_their_names() {
        assert_eq!(signal_name(9), "SIGKILL");
        assert_eq!(signal_name(2), "SIGINT");
        assert_eq!(signal_name(11), "SIGSEGV");
        assert_eq!(signal_name(99), "SIG99");
    }
}
