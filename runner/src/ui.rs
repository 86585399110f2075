//! What the runner shows: the agent's assistant text on stdout, as it
//! arrives, and the runner's own status on stderr — a live countdown with a
//! progress bar on a terminal, plain periodic lines otherwise (logs, CI).
//! Waits count down against the server's clock, corrected by the offset
//! between the server's `server_time` and this machine's clock.

use chrono::{DateTime, Local, Utc};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::Duration;

/// How often a non-terminal wait prints a line.
const PLAIN_EVERY: Duration = Duration::from_secs(30);

pub struct Ui {
    /// Nothing is printed at all (the demo's simulated agents).
    quiet: bool,
    /// Show the agent's own stderr lines as they come.
    verbose: bool,
    /// Show each evidence envelope before it is reported.
    show_evidence: bool,
    terminal: bool,
    bar: Mutex<Option<ProgressBar>>,
}

impl Ui {
    pub fn new(verbose: bool, show_evidence: bool) -> Ui {
        Ui {
            quiet: false,
            verbose,
            show_evidence,
            terminal: std::io::stderr().is_terminal(),
            bar: Mutex::new(None),
        }
    }

    pub fn quiet() -> Ui {
        Ui {
            quiet: true,
            verbose: false,
            show_evidence: false,
            terminal: false,
            bar: Mutex::new(None),
        }
    }

    /// Assistant text, exactly as it came.
    pub fn assistant(&self, text: &str) {
        if self.quiet {
            return;
        }
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }

    /// One status line of the runner's own.
    pub fn status(&self, message: &str) {
        if self.quiet {
            return;
        }
        let line = format!("kandev-recovery: {message}");
        match self.bar.lock().ok().as_ref().and_then(|b| b.as_ref()) {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }

    /// The envelope about to be reported (with `--show-evidence`): what the
    /// service will classify, one JSON line.
    pub fn evidence(&self, envelope: &domain::evidence::Evidence) {
        if self.show_evidence && !self.quiet {
            let json = serde_json::to_string(envelope).unwrap_or_default();
            self.status(&format!("evidence: {json}"));
        }
    }

    /// A line the agent wrote to its stderr (shown with `--verbose`).
    pub fn agent_stderr(&self, line: &str) {
        if self.verbose && !self.quiet {
            eprintln!("  | {line}");
        }
    }

    /// Starts showing a wait for `deadline` (the server's clock), `what`
    /// saying what is awaited.
    pub fn begin_wait(&self, what: &str, deadline: DateTime<Utc>, clock: ServerClock) -> Wait {
        let total = (deadline - clock.now()).num_milliseconds().max(1) as u64;
        let local = deadline.with_timezone(&Local);
        let at = local.format("%H:%M:%S %Z, %a %e %b").to_string();
        self.status(&format!("{what}; waiting until {at}"));
        let bar = if self.terminal && !self.quiet {
            let bar = ProgressBar::new(total);
            bar.set_style(
                ProgressStyle::with_template("  {msg} [{bar:32}] ")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            bar.enable_steady_tick(Duration::from_millis(250));
            if let Ok(mut slot) = self.bar.lock() {
                *slot = Some(bar.clone());
            }
            Some(bar)
        } else {
            None
        };
        let wait = Wait {
            quiet: self.quiet,
            bar,
            total,
            deadline,
            clock,
            what: what.to_string(),
            last_plain: std::time::Instant::now(),
        };
        wait.show();
        wait
    }

    /// Ends the wait display.
    pub fn end_wait(&self, wait: Wait) {
        if let Some(bar) = wait.bar {
            bar.finish_and_clear();
        }
        if let Ok(mut slot) = self.bar.lock() {
            *slot = None;
        }
    }
}

/// The server's clock as seen from here: local time plus a fixed offset.
#[derive(Debug, Clone, Copy)]
pub struct ServerClock {
    offset: chrono::Duration,
}

impl ServerClock {
    /// From a snapshot's `server_time`, read just now.
    pub fn from_server_time(server_time: DateTime<Utc>) -> ServerClock {
        ServerClock {
            offset: server_time - Utc::now(),
        }
    }

    pub fn now(&self) -> DateTime<Utc> {
        Utc::now() + self.offset
    }
}

/// A wait being shown.
pub struct Wait {
    quiet: bool,
    bar: Option<ProgressBar>,
    total: u64,
    deadline: DateTime<Utc>,
    clock: ServerClock,
    what: String,
    last_plain: std::time::Instant,
}

impl Wait {
    /// Counts down against a fresh reading of the server's clock.
    pub fn resync(&mut self, clock: ServerClock) {
        self.clock = clock;
    }

    /// Updates the countdown; call about once a second.
    pub fn tick(&mut self) {
        if self.bar.is_none() && self.last_plain.elapsed() < PLAIN_EVERY {
            return;
        }
        self.last_plain = std::time::Instant::now();
        self.show();
    }

    fn show(&self) {
        let left = (self.deadline - self.clock.now()).num_milliseconds();
        let words = domain::words::countdown(left);
        match &self.bar {
            Some(bar) => {
                bar.set_position(self.total.saturating_sub(left.max(0) as u64));
                bar.set_message(format!("{} · {words}", self.what));
            }
            None if !self.quiet => eprintln!("kandev-recovery: {} · {words}", self.what),
            None => {}
        }
    }
}
