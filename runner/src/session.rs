//! Following one route to its end: deliver the prompt, report what
//! happened, and do what the service decided — wait for its dispatch,
//! switch, or stop for a person. The service owns every decision and every
//! timer; this loop only reads the route it answers with ([`super::step`]).
//!
//! A prompt is delivered without a dispatch only once: to the route this
//! runner just opened. Any later `active` route was made so by someone
//! else (another runner acknowledged a switch, say), and is not delivered
//! again.

use super::attempt::{End, Outcome, Progress};
use super::client::{Invocation, Service, ServiceError};
use super::envelope::{envelope, Subject};
use super::step::{decision_line, step, Step};
use super::ui::{ServerClock, Ui};
use domain::ids::RouteId;
use domain::profile::{Candidate, Profile};
use domain::route::{Action, Dispatch, RouteSnapshot, RouteState};
use domain::words::{awaited, stopped_words};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// A claimed dispatch must be acknowledged within this lease. The runner
/// acknowledges as soon as the agent has the prompt — seconds, or for an
/// ACP agent started through npx, maybe a minute or two.
const LEASE_SECONDS: u32 = 300;
/// How long one claim long-polls before the route is read again.
const CLAIM_WAIT_SECONDS: u32 = 20;
/// While waiting, an unreachable service is tried again this often.
const UNREACHABLE_PAUSE: Duration = Duration::from_secs(10);

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
    /// A route this runner must not deliver (again), and why.
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
    /// The route's dispatch was handed to someone else.
    Taken(Box<RouteSnapshot>),
    Interrupted,
}

impl<L: Launcher> Session<'_, L> {
    /// Follows `route` until it succeeds, stops for a person, or the user
    /// interrupts. `attached`: the route was opened by someone else (or an
    /// earlier runner), so an `active` one is not delivered.
    pub async fn follow(&mut self, mut route: RouteSnapshot, attached: bool) -> Ending {
        let mut may_deliver_active = !attached;
        loop {
            let delivery =
                match step(&route) {
                    Step::Deliver if !may_deliver_active => {
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
                        // The service asks for the provider session to be
                        // resumed, not the prompt sent again; this runner
                        // cannot resume an agent's session (it never claims a
                        // resumable failure itself), so it does not deliver.
                        // The dispatch stays undelivered: its lease runs out
                        // and the route stops for a person, unrepeated.
                        Ok(Awaited::Dispatch(d)) if d.resume.is_some() => return Ending::Refused(
                            route,
                            "the service asks to resume the agent's provider session rather than \
                             send the prompt again, and this runner cannot resume sessions, so it \
                             does not deliver"
                                .into(),
                        ),
                        Ok(Awaited::Dispatch(d)) => Delivery {
                            invocation: Invocation::of_dispatch(&d),
                            candidate_id: d.candidate.id.clone(),
                            dispatch: Some(d),
                        },
                        Ok(Awaited::Moved(r)) => {
                            route = *r;
                            may_deliver_active = false;
                            continue;
                        }
                        Ok(Awaited::Taken(r)) => {
                            return Ending::Refused(
                                *r,
                                "the route's next attempt was already handed out (to an earlier \
                             runner?), so this runner does not deliver it"
                                    .into(),
                            )
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
            may_deliver_active = false;
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
            Some(domain::route::DispatchReason::Switch) => "switching to",
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
            // The service refused the delivery: the route as it answered.
            let mut refused: Option<RouteSnapshot> = None;
            while let Some(p) = rx.recv().await {
                match p {
                    Progress::Delivered => {
                        let Some(dispatch) = &dispatch else { continue };
                        match service.acknowledge(dispatch).await {
                            Ok(_) => {}
                            // A definite no (the route moved on): stop the
                            // agent, report nothing about it.
                            Err(ServiceError::Api(e)) if e.route.is_some() => {
                                ui.status(&format!(
                                    "the service did not accept the delivery ({}); stopping the agent",
                                    e.message
                                ));
                                refused = e.route.map(|r| *r);
                                attempt_cancel.cancel();
                            }
                            // Unknown whether it was stored: the agent has
                            // the prompt either way, so let it work; the
                            // report at its end says what happened.
                            Err(e) => ui.status(&format!(
                                "could not acknowledge the delivery ({e}); carrying on"
                            )),
                        }
                    }
                    Progress::Effect(kind, session) => {
                        if let Err(e) = service
                            .report_effect(&route_id, &invocation, kind, session.as_deref())
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
            return Ok(Next::Route(route_now));
        }
        let subject = Subject {
            route_id: route.id.as_str(),
            generation: d.invocation.generation.get(),
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
            Outcome::Failed => {
                let reply = self.report(&route.id, &subject, &end).await?;
                Ok(Next::Route(reply))
            }
            Outcome::Interrupted => {
                let reply = self.report(&route.id, &subject, &end).await?;
                // The interruption normally stops the route (it is
                // classified `cancelled`); if the route still waits, nothing
                // should fire later with no runner to deliver it.
                Ok(Next::Done(self.stop_if_waiting(reply).await))
            }
        }
    }

    async fn report(
        &self,
        route_id: &RouteId,
        subject: &Subject<'_>,
        end: &End,
    ) -> Result<RouteSnapshot, ServiceError> {
        let evidence = envelope(subject, &end.record);
        self.ui.evidence(&evidence);
        let reply = self.service.report_failure(route_id, &evidence).await?;
        self.ui.status(&decision_line(&reply));
        Ok(reply.route)
    }

    /// Shows the wait and long-polls for this route's dispatch; the backend
    /// owns the timer, so `retry_now` from the web app ends the wait at once.
    async fn await_dispatch(&self, route: &RouteSnapshot) -> Result<Awaited, ServiceError> {
        let mut route = route.clone();
        let mut wait = self.begin_wait(&route);
        let mut ticker = tokio::time::interval(Duration::from_secs(1));
        let route_id = route.id.clone();
        let mut unreachable_since: Option<tokio::time::Instant> = None;
        let result = loop {
            // In `retrying` or `switching` the dispatch already exists: a
            // claim that finds none means someone else holds it.
            // (A switch waiting for a held candidate has no dispatch yet.)
            let handed_out = matches!(route.state, RouteState::Retrying | RouteState::Switching)
                && route.pending.is_none();
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
                Some(Ok(Some(d))) => break Ok(Awaited::Dispatch(d)),
                // Nothing is in flight while waiting, so an unreachable
                // service (a restart, a long outage) is waited out.
                Some(Err(ServiceError::Unreachable { message, .. })) => {
                    if unreachable_since.is_none() {
                        self.ui.status(&format!(
                            "the service is unreachable ({message}); still waiting, trying again every {} s",
                            UNREACHABLE_PAUSE.as_secs()
                        ));
                        unreachable_since = Some(tokio::time::Instant::now());
                    }
                    tokio::select! {
                        _ = tokio::time::sleep(UNREACHABLE_PAUSE) => continue,
                        _ = self.cancel.cancelled() => break Ok(Awaited::Interrupted),
                    }
                }
                Some(Err(e)) => break Err(e),
                Some(Ok(None)) => {
                    if unreachable_since.take().is_some() {
                        self.ui.status("the service is back");
                    }
                    let now = tokio::select! {
                        r = self.service.route(&route_id) => r?,
                        _ = self.cancel.cancelled() => break Ok(Awaited::Interrupted),
                    };
                    if step(&now) != Step::AwaitDispatch {
                        break Ok(Awaited::Moved(Box::new(now)));
                    }
                    if handed_out && now.generation == route.generation {
                        break Ok(Awaited::Taken(Box::new(now)));
                    }
                    if now.pending != route.pending {
                        if let Some(w) = wait.take() {
                            self.ui.end_wait(w);
                        }
                        wait = self.begin_wait(&now);
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

    fn begin_wait(&self, route: &RouteSnapshot) -> Option<super::ui::Wait> {
        match &route.pending {
            Some(p) => Some(self.ui.begin_wait(
                &awaited(route),
                p.deadline,
                ServerClock::from_server_time(route.server_time),
            )),
            None => {
                self.ui.status(&format!("waiting for {}", awaited(route)));
                None
            }
        }
    }

    /// Ctrl-C while waiting: stop the route, so nothing fires later with
    /// no runner to deliver it.
    async fn interrupt_wait(&self, route: RouteSnapshot) -> Ending {
        let now = self.service.route(&route.id).await.unwrap_or(route);
        self.stop_if_waiting(now).await
    }

    /// Stops a route that waits for its next attempt (a timer, or a
    /// dispatch nobody but this runner would deliver); a route already
    /// stopped, or active, is left as it is.
    async fn stop_if_waiting(&self, route: RouteSnapshot) -> Ending {
        let awaiting = route.state.is_waiting()
            || matches!(route.state, RouteState::Retrying | RouteState::Switching);
        if !awaiting {
            return Ending::Interrupted(Some(route));
        }
        match self
            .service
            .act(&route.id, Action::Stop, route.generation)
            .await
        {
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
            .ok_or_else(|| {
                ServiceError::Profile(format!(
                    "profile \"{}\" has no candidate `{id}` any more",
                    self.profile.name
                ))
            })
    }
}

enum Next {
    Route(RouteSnapshot),
    Done(Ending),
}
