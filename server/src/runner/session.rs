//! Following one route to its end: deliver the prompt, report what
//! happened, and do what the service decided — wait for its dispatch,
//! switch, or stop for a person. The service owns every decision and every
//! timer; this loop only reads the route it answers with ([`super::step`]).

use super::attempt::{End, Outcome, Progress};
use super::client::{Invocation, Service, ServiceError};
use super::envelope::{envelope, Subject};
use super::step::{awaited, decision_line, step, stopped_words, Step};
use super::ui::{ServerClock, Ui};
use app::profile::{Candidate, Profile};
use app::route::{Dispatch, RouteSnapshot};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// A claimed dispatch must be acknowledged within this lease; the runner
/// acknowledges as soon as the agent has the prompt, seconds after.
const LEASE_SECONDS: u32 = 120;
/// How long one claim long-polls before the route is read again.
const CLAIM_WAIT_SECONDS: u32 = 20;

/// Runs attempts of candidates: real processes, an ACP agent, or the
/// demo's simulated agents.
// The runner drives one session on a local task set, so attempts need not
// be `Send` (the ACP connection's are not).
#[allow(async_fn_in_trait)]
pub trait Launcher {
    async fn attempt(
        &self,
        candidate: &Candidate,
        prompt: &str,
        progress: mpsc::UnboundedSender<Progress>,
        cancel: CancellationToken,
        ui: &Ui,
    ) -> End;
}

/// How following the route ended.
#[derive(Debug)]
pub enum Ending {
    Succeeded(RouteSnapshot),
    /// Stopped for a person (`action_required`), or finished otherwise.
    Stopped(RouteSnapshot),
    Interrupted(Option<RouteSnapshot>),
    /// The service could not be reached or refused a report.
    Service(ServiceError),
    /// Attached to a route this runner must not deliver again.
    Refused(RouteSnapshot, String),
}

pub struct Session<'a, L: Launcher> {
    pub service: &'a Service,
    pub profile: Profile,
    pub launcher: &'a L,
    pub ui: &'a Ui,
    pub cancel: CancellationToken,
    pub prompt: &'a str,
}

/// The next invocation to deliver, and the dispatch that authorised it.
struct Delivery {
    invocation: Invocation,
    candidate_id: String,
    dispatch: Option<Dispatch>,
}

enum Awaited {
    Dispatch(Dispatch),
    /// The route left its wait without a dispatch for us (stopped from the
    /// web app, say).
    Moved(Box<RouteSnapshot>),
    Interrupted,
}

impl<L: Launcher> Session<'_, L> {
    /// Follows `route` until it succeeds, stops for a person, or the user
    /// interrupts. `attached`: the route was opened by someone else (or an
    /// earlier runner), so an `active` one is not delivered again.
    pub async fn follow(&mut self, mut route: RouteSnapshot, attached: bool) -> Ending {
        let mut first = true;
        loop {
            let delivery = match step(&route) {
                Step::Deliver if attached && first => {
                    return Ending::Refused(
                        route,
                        "the route is active: its prompt may already be running or have run, \
                         so this runner does not deliver it again"
                            .into(),
                    )
                }
                Step::Deliver => Delivery {
                    invocation: Invocation::of(&route),
                    candidate_id: route.candidate.id.clone(),
                    dispatch: None,
                },
                Step::AwaitDispatch => match self.await_dispatch(&route).await {
                    Ok(Awaited::Dispatch(d)) => Delivery {
                        invocation: Invocation::of_dispatch(&d),
                        candidate_id: d.candidate.id.clone(),
                        dispatch: Some(d),
                    },
                    Ok(Awaited::Moved(r)) => {
                        route = *r;
                        first = false;
                        continue;
                    }
                    Ok(Awaited::Interrupted) => return self.interrupt_wait(route).await,
                    Err(e) => return Ending::Service(e),
                },
                Step::Stopped | Step::Finished => {
                    for line in stopped_words(&route, &self.service.route_page(&route.id)) {
                        self.ui.status(&line);
                    }
                    return Ending::Stopped(route);
                }
            };
            first = false;
            match self.deliver(&route, delivery).await {
                Ok(Next::Route(r)) => route = r,
                Ok(Next::Done(ending)) => return ending,
                Err(e) => return Ending::Service(e),
            }
        }
    }

    /// Runs one attempt and reports it.
    async fn deliver(&mut self, route: &RouteSnapshot, d: Delivery) -> Result<Next, ServiceError> {
        let candidate = self.candidate(&d.candidate_id).await?;
        let why = match d.dispatch.as_ref().map(|d| d.reason) {
            Some(app::route::DispatchReason::Switch) => "switching to",
            Some(_) => "retrying",
            None => "starting",
        };
        self.ui.status(&format!("{why} {}", candidate.label));
        let (tx, mut rx) = mpsc::unbounded_channel();
        let attempt_cancel = self.cancel.child_token();
        let attempt =
            self.launcher
                .attempt(&candidate, self.prompt, tx, attempt_cancel.clone(), self.ui);
        // Reports made while the agent runs: the acknowledgement as soon as
        // the prompt is delivered (a lease is short), and the first effect
        // before anything else is said about this attempt.
        let service = self.service;
        let route_id = route.id.clone();
        let invocation = d.invocation.clone();
        let dispatch = d.dispatch.clone();
        let ui = self.ui;
        let reports = async {
            // The service refused the delivery (the route moved on): the
            // route as it answered, if it did.
            let mut refused: Option<Option<RouteSnapshot>> = None;
            while let Some(p) = rx.recv().await {
                match p {
                    Progress::Delivered => {
                        if let Some(dispatch) = &dispatch {
                            if let Err(e) = service.acknowledge(dispatch).await {
                                ui.status(&format!(
                                    "the service did not accept the delivery ({e}); stopping the agent"
                                ));
                                refused = Some(e.route().cloned());
                                attempt_cancel.cancel();
                            }
                        }
                    }
                    Progress::Effect(kind, session) => {
                        if let Err(e) = service
                            .report_effect(
                                &route_id,
                                &invocation,
                                kind.as_str(),
                                session.as_deref(),
                            )
                            .await
                        {
                            // The envelope carries the effect too; the gate
                            // still sees it if this report was lost.
                            ui.status(&format!("could not report the agent's output: {e}"));
                        }
                    }
                }
            }
            refused
        };
        let (end, refused) = tokio::join!(attempt, reports);
        if let Some(route_now) = refused {
            // Nothing is reported for an attempt the service did not
            // authorise; the loop goes on from the route as it is.
            return Ok(Next::Route(match route_now {
                Some(r) => r,
                None => self.service.route(&route.id).await?,
            }));
        }
        let subject = Subject {
            route_id: &route.id,
            generation: d.invocation.generation,
            invocation_id: &d.invocation.invocation_id,
            prompt_generation: d.invocation.prompt_generation,
            agent: &candidate.agent,
            provider_id: &candidate.provider_id,
            model_id: &candidate.model_id,
        };
        match end.outcome {
            Outcome::Succeeded => {
                match self.service.report_success(&route.id, &d.invocation).await {
                    Ok(r) => {
                        self.ui.status(&format!("{} succeeded", candidate.label));
                        Ok(Next::Done(Ending::Succeeded(r)))
                    }
                    // The work is done whatever the route says now.
                    Err(e) => {
                        self.ui
                            .status(&format!("the agent succeeded, but the service said: {e}"));
                        Ok(Next::Done(Ending::Succeeded(
                            e.route().cloned().unwrap_or_else(|| route.clone()),
                        )))
                    }
                }
            }
            Outcome::Failed | Outcome::Interrupted => {
                let interrupted = end.outcome == Outcome::Interrupted;
                let evidence = envelope(&subject, &end.record);
                self.ui.evidence(&evidence);
                let reply = self.service.report_failure(&route.id, &evidence).await?;
                self.ui.status(&decision_line(&reply));
                if interrupted {
                    return Ok(Next::Done(Ending::Interrupted(Some(reply.route))));
                }
                Ok(Next::Route(reply.route))
            }
        }
    }

    /// Shows the wait and long-polls for this route's dispatch; the backend
    /// owns the timer, so `retry_now` from the web app ends the wait at once.
    async fn await_dispatch(&self, route: &RouteSnapshot) -> Result<Awaited, ServiceError> {
        let mut route = route.clone();
        let mut wait = route.pending.as_ref().map(|p| {
            self.ui.begin_wait(
                &awaited(&route),
                p.deadline,
                ServerClock::from_server_time(route.server_time),
            )
        });
        if wait.is_none() {
            self.ui.status(&format!("waiting for {}", awaited(&route)));
        }
        let mut ticker = tokio::time::interval(Duration::from_secs(1));
        let route_id = route.id.clone();
        let result = loop {
            let claim = self
                .service
                .claim(&route_id, LEASE_SECONDS, CLAIM_WAIT_SECONDS);
            tokio::pin!(claim);
            let claimed = loop {
                tokio::select! {
                    c = &mut claim => break Some(c),
                    _ = ticker.tick() => {
                        if let Some(w) = wait.as_mut() {
                            w.tick();
                        }
                    }
                    _ = self.cancel.cancelled() => break None,
                }
            };
            match claimed {
                None => break Ok(Awaited::Interrupted),
                Some(Err(e)) => break Err(e),
                Some(Ok(Some(d))) => break Ok(Awaited::Dispatch(d)),
                Some(Ok(None)) => {
                    let now = self.service.route(&route_id).await?;
                    if step(&now) != Step::AwaitDispatch {
                        break Ok(Awaited::Moved(Box::new(now)));
                    }
                    if now.pending != route.pending {
                        if let Some(w) = wait.take() {
                            self.ui.end_wait(w);
                        }
                        wait = now.pending.as_ref().map(|p| {
                            self.ui.begin_wait(
                                &awaited(&now),
                                p.deadline,
                                ServerClock::from_server_time(now.server_time),
                            )
                        });
                    }
                    route = now;
                }
            }
        };
        if let Some(w) = wait {
            self.ui.end_wait(w);
        }
        result
    }

    /// Ctrl-C while waiting: stop the route, so nothing fires later with
    /// no runner to deliver it.
    async fn interrupt_wait(&self, route: RouteSnapshot) -> Ending {
        let now = self.service.route(&route.id).await.unwrap_or(route);
        if step(&now) != Step::AwaitDispatch {
            return Ending::Interrupted(Some(now));
        }
        match self.service.act(&now.id, "stop", now.generation).await {
            Ok(r) => {
                self.ui.status("interrupted: the route is stopped");
                Ending::Interrupted(Some(r))
            }
            Err(e) => {
                self.ui
                    .status(&format!("interrupted; the route could not be stopped: {e}"));
                Ending::Interrupted(e.route().cloned())
            }
        }
    }

    /// The candidate by id, from the profile (read again if it changed).
    async fn candidate(&mut self, id: &str) -> Result<Candidate, ServiceError> {
        if let Some(c) = self.profile.candidates.iter().find(|c| c.id == id) {
            return Ok(c.clone());
        }
        self.profile = self.service.profile(&self.profile.id).await?;
        self.profile
            .candidates
            .iter()
            .find(|c| c.id == id)
            .cloned()
            .ok_or_else(|| ServiceError::Decode {
                url: self.service.route_page(""),
                message: format!("the profile has no candidate `{id}` any more"),
            })
    }
}

enum Next {
    Route(RouteSnapshot),
    Done(Ending),
}
