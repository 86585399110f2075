//! One concrete session, start to finish: run the agent, and after each
//! failure ask the service for the decision (with the cycle counters kept
//! here), then carry it out — wait until its time and run the agent again,
//! or stop with the reason. The service decides; the runner only keeps
//! the timer, since no route holds one for it.
//!
//! A failed attempt's envelope carries every effect the attempt saw, so
//! the service's effect-safety gate never lets a prompt that may have
//! produced output or run a tool be sent again.

use super::next::{cause, decision_line, next, Next};
use crate::attempt::{Outcome, Progress};
use crate::client::{Service, ServiceError};
use crate::envelope::{effect_item, envelope, Phase, Subject};
use crate::session::Launcher;
use crate::ui::{ServerClock, Ui};
use domain::concrete::{CycleUsage, EvaluateRequest};
use domain::evidence::{Evidence, Item};
use domain::policy::CandidatePolicy;
use domain::profile::Candidate;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// While waiting, the server's clock is read again after 1 s, then ever
/// less often up to once a minute: a long wait stays on the clock its
/// deadline is on, without a request a second.
const FIRST_SYNC: Duration = Duration::from_secs(1);
const MAX_SYNC: Duration = Duration::from_secs(60);
/// A clock reading that takes longer is skipped (the wait goes on).
const SYNC_PATIENCE: Duration = Duration::from_secs(5);

/// How a concrete session ended.
#[derive(Debug)]
pub enum Ending {
    Succeeded,
    /// Stopped with a reason (already printed).
    Stopped,
    Interrupted,
    /// The service could not be reached or refused the evaluation.
    Service(ServiceError),
}

pub struct ConcreteSession<'a, L: Launcher> {
    pub service: &'a Service,
    pub launcher: &'a L,
    pub ui: &'a Ui,
    pub cancel: CancellationToken,
    pub prompt: &'a str,
    /// The one agent, as a candidate (its `profile_ref` is its table).
    pub candidate: Candidate,
    pub policy: CandidatePolicy,
}

impl<L: Launcher> ConcreteSession<'_, L> {
    pub async fn run(&self) -> Ending {
        let label = self.candidate.label.clone();
        // What this cycle used, per class: the service counts from it.
        let mut cycle = CycleUsage::default();
        let mut why = "starting";
        loop {
            self.ui.status(&format!("{why} {label}"));
            let (tx, mut rx) = mpsc::unbounded_channel();
            let attempt = self.launcher.attempt(
                &self.candidate,
                self.prompt,
                tx,
                self.cancel.child_token(),
                self.ui,
            );
            let effects = async {
                let mut first = None;
                while let Some(p) = rx.recv().await {
                    if let Progress::Effect(kind, _) = p {
                        first.get_or_insert(kind);
                    }
                }
                first
            };
            let (end, first_effect) = tokio::join!(attempt, effects);
            match end.outcome {
                Outcome::Succeeded => {
                    self.ui.status(&format!("{label} succeeded"));
                    return Ending::Succeeded;
                }
                Outcome::Interrupted => {
                    self.ui
                        .status("interrupted: nothing else runs (a concrete session leaves nothing waiting on the service)");
                    return Ending::Interrupted;
                }
                Outcome::Failed => {}
            }
            let mut record = end.record;
            // Fail closed: an effect the attempt announced is evidence even
            // if its record lost it.
            let has_effect = record.items.iter().any(|i| matches!(i, Item::AcpUpdate(_)));
            if let (Some(kind), false) = (first_effect, has_effect) {
                record.items.insert(0, effect_item(kind));
                if record.phase == Phase::Prompt {
                    record.phase = Phase::Stream;
                }
            }
            let evidence = self.evidence(&record);
            self.ui.evidence(&evidence);
            let http_status = evidence.items.iter().find_map(|i| match i {
                Item::Http(h) => h.status,
                _ => None,
            });
            let request = EvaluateRequest {
                policy: self.policy,
                evidence,
                cycle: Some(cycle),
            };
            let answer = match self.service.evaluate(&request).await {
                Ok(a) => a,
                Err(e) => return Ending::Service(e),
            };
            let cause = cause(&answer, http_status);
            self.ui.status(&decision_line(&answer, &cause));
            cycle = answer.cycle;
            match next(&answer, &label, &cause) {
                Next::Wait { deadline, awaited } => {
                    if !self.wait(deadline, &awaited).await {
                        self.ui.status(&format!(
                            "interrupted while waiting; {label} was not run again"
                        ));
                        return Ending::Interrupted;
                    }
                    why = match answer.decision.kind {
                        domain::route::DecisionKind::WaitForReset => "after the reset, trying",
                        _ => "retrying",
                    };
                }
                Next::Stop { reason } => {
                    self.ui.status(&format!("stopped on {label}: {reason}"));
                    self.ui.status(&format!("last error: {cause}"));
                    return Ending::Stopped;
                }
            }
        }
    }

    /// The envelope: no route identity (there is no route), the agent's
    /// family, provider and model.
    fn evidence(&self, record: &crate::envelope::Record) -> Evidence {
        let c = &self.candidate;
        let subject = Subject {
            route_id: "",
            generation: 0,
            invocation_id: "",
            prompt_generation: 0,
            agent: &c.agent,
            provider_id: &c.provider_id,
            model_id: &c.model_id,
        };
        let mut evidence = envelope(&subject, record);
        evidence.generation = None;
        evidence.prompt_generation = None;
        evidence
    }

    /// Waits until the server's clock reaches `deadline`, counting down;
    /// `false` if interrupted.
    async fn wait(&self, deadline: chrono::DateTime<chrono::Utc>, awaited: &str) -> bool {
        let mut clock = self
            .read_clock()
            .await
            .unwrap_or_else(|| ServerClock::from_server_time(chrono::Utc::now()));
        let mut wait = self.ui.begin_wait(awaited, deadline, clock);
        let mut sync_every = FIRST_SYNC;
        let mut next_sync = tokio::time::Instant::now() + sync_every;
        let finished = loop {
            let left = (deadline - clock.now()).num_milliseconds();
            if left <= 0 {
                break true;
            }
            let nap = Duration::from_millis(left.min(1000) as u64);
            tokio::select! {
                _ = tokio::time::sleep(nap) => {}
                _ = self.cancel.cancelled() => break false,
            }
            wait.tick();
            if tokio::time::Instant::now() >= next_sync {
                if let Some(c) = self.read_clock().await {
                    clock = c;
                    wait.resync(c);
                }
                sync_every = (sync_every * 2).min(MAX_SYNC);
                next_sync = tokio::time::Instant::now() + sync_every;
            }
        };
        self.ui.end_wait(wait);
        finished
    }

    /// The server's clock now, or `None` if it could not be read quickly
    /// (the wait then goes on by the last reading).
    async fn read_clock(&self) -> Option<ServerClock> {
        tokio::select! {
            r = tokio::time::timeout(SYNC_PATIENCE, self.service.server_time()) => {
                r.ok()?.ok().map(ServerClock::from_server_time)
            }
            _ = self.cancel.cancelled() => None,
        }
    }
}
