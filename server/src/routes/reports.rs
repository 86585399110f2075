//! What an agent adapter reports about the current invocation: a failure
//! (classified, gated, decided and planned, then committed), an effect
//! (output or tool activity, late ones included) and a success (a new
//! cycle, and the probe it may have been closing its circuits).

use super::error::{Result, RouteError};
use super::machine::{self, Outcome, Trigger};
use super::model::Route;
use super::plan::{self, FailureFacts};
use super::service::{Change, CIRCUIT_ATTEMPTS};
use super::Routes;
use crate::circuits::CircuitKey;
use crate::recovery::{EffectGate, GateInput, GateVerdict};
use crate::store::{Commit, DecisionRows, StoreError};
use crate::unknown::AttemptRef;
use chrono::{DateTime, Utc};
use classify::{classify_with, Classification, Evidence};
use domain::api::{EffectReport, FailureAnswer, InvocationReport};
use domain::ids::{Generation, RouteId};
use domain::policy::{FieldError, FieldErrorCode};
use domain::route::{DispatchState, EventKind, RouteSnapshot, RouteState};

impl Routes {
    /// Classifies a failure, runs the gate and the policy, and commits the
    /// resulting transition.
    pub async fn report_failure(
        &self,
        id: &RouteId,
        body: &serde_json::Value,
    ) -> Result<FailureAnswer> {
        self.report_failure_read(id, body, None).await
    }

    /// [`RouteService::report_failure`], deciding first on `read`, the
    /// route as [`Store::get_route_for_decision`] answered it after the
    /// report arrived (the HTTP guard reads it with the caller's token).
    /// A read that is stale by the time it commits is fenced like any
    /// other: the route's generation decides.
    pub async fn report_failure_read(
        &self,
        id: &RouteId,
        body: &serde_json::Value,
        read: Option<DecisionRows>,
    ) -> Result<FailureAnswer> {
        let evidence = Evidence::from_json_value(body).map_err(|e| {
            RouteError::Malformed(format!("The evidence envelope could not be read: {e}."))
        })?;
        if let Some(rid) = &evidence.route_id {
            if id != rid.as_str() {
                return Err(RouteError::Invalid(vec![FieldError::new(
                    "route_id",
                    FieldErrorCode::InvalidValue,
                    format!("the envelope names route `{rid}`, not `{id}`"),
                )]));
            }
        }
        let now = self.now();
        // With its trace: every attempt shows why it was classified so;
        // one catalogue for the classification and what is counted of it,
        // whatever a reload swaps in meanwhile.
        let catalogue = self.catalogue.current();
        let classification = classify_with(&catalogue, &evidence, now, true);
        crate::meters::failure(&catalogue, &classification);
        let answer = self
            .plan_with_retries(id, read, &evidence, &classification, now)
            .await;
        self.log_unknown(id, &evidence, &classification, answer.is_ok(), now)
            .await;
        answer
    }

    /// Plans and commits the failure, planning again from what is stored
    /// when a circuit another route changed moved on meanwhile.
    async fn plan_with_retries(
        &self,
        id: &RouteId,
        mut read: Option<DecisionRows>,
        evidence: &Evidence,
        classification: &Classification,
        now: DateTime<Utc>,
    ) -> Result<FailureAnswer> {
        for _ in 0..CIRCUIT_ATTEMPTS {
            if let Some(answer) = self
                .plan_failure(id, read.take(), evidence, classification, now)
                .await?
            {
                return Ok(answer);
            }
        }
        Err(RouteError::Conflict(
            "shared circuits kept changing; report the failure again".into(),
        ))
    }

    /// Logs unrecognised evidence (its sanitised skeleton) with the
    /// attempt the report just recorded, found among the route's newest
    /// attempts by its time and rule (a stale report records none). The
    /// log is for growing the catalogue: losing one sighting must not stop
    /// a route's recovery, so a failed write is only logged.
    async fn log_unknown(
        &self,
        id: &RouteId,
        evidence: &Evidence,
        classification: &Classification,
        committed: bool,
        now: DateTime<Utc>,
    ) {
        if classification.class != domain::policy::ErrorClass::Unclassified {
            return;
        }
        let at = now.timestamp_millis();
        let seq = match committed {
            true => match self.store.attempts_page(id.as_str(), None, 4).await {
                Ok(rows) => rows
                    .into_iter()
                    .find(|a| {
                        a.created_at == at && a.classifier_rule == classification.classifier_rule
                    })
                    .map(|a| a.seq),
                Err(e) => {
                    tracing::warn!(error = %e, "reading the attempt of unknown evidence failed");
                    None
                }
            },
            false => None,
        };
        let attempt = seq.map(|seq| AttemptRef {
            route_id: id.as_str(),
            seq,
        });
        if let Err(e) = self
            .unknown
            .record_sighting(classification, Some(evidence), attempt)
            .await
        {
            tracing::warn!(error = %e, "recording unknown evidence failed");
        }
    }

    /// One try at committing a failure; `None` when a circuit moved on.
    pub(super) async fn plan_failure(
        &self,
        id: &RouteId,
        read: Option<DecisionRows>,
        evidence: &Evidence,
        classification: &Classification,
        now: DateTime<Utc>,
    ) -> Result<Option<FailureAnswer>> {
        let classification = classification.clone();
        let (route, profile, mut circuits) = self.load_for_decision(id, read).await?;
        let gate = EffectGate {
            generation: route.generation.get(),
            invocation_id: &route.invocation_id,
            prompt_generation: route.prompt_generation,
            reported_effects: route.effects,
            provider_session_id: route.provider_session_id.as_deref(),
        }
        .check(&GateInput {
            generation: evidence.generation.map(|g| g as i64),
            invocation_id: evidence.invocation_id.as_deref(),
            prompt_generation: evidence.prompt_generation.map(|g| g as i64),
            effect_items: evidence.effect_count(),
            phase: evidence.phase,
            resumable_session: evidence
                .resumable
                .as_ref()
                .and_then(|r| r.provider_session_id.as_deref()),
            resumable_generation: evidence
                .resumable
                .as_ref()
                .and_then(|r| r.generation)
                .map(|g| g as i64),
        });
        let accepts =
            machine::next(route.state, Trigger::Failure(Outcome::ManualRecovery)).is_some();
        if gate == GateVerdict::Stale || !accepts {
            return Ok(Some(stale_answer(classification, &route, now)));
        }
        let decided = plan::decide(
            &route,
            gate,
            &classification,
            profile.as_ref(),
            &mut circuits.set,
            now,
        );
        let plan = plan::failure(FailureFacts {
            route: &route,
            decided,
            circuits: &mut circuits.set,
            classification: &classification,
            http_status: error_status(evidence),
            profile: profile.as_ref(),
            max_hold_wait: self.settings.max_hold_wait,
            resume: evidence.resumable.as_ref().and_then(|r| {
                Some(domain::route::Resume {
                    provider_session_id: r.provider_session_id.clone()?,
                    generation: i64::try_from(r.generation?).ok()?,
                })
            }),
            now,
        });
        let mut commit = plan.commit;
        commit.circuits = circuits.writes(route.id.as_str());
        let reopened: Vec<CircuitKey> = circuits
            .set
            .changes()
            .into_iter()
            .filter(|c| c.kind() == crate::circuits::ChangeKind::Reopened)
            .map(|c| c.after.key)
            .collect();
        let change = Change::after(&route, plan.route, commit);
        match self.apply(change, EventKind::Failure).await {
            Ok(snapshot) => {
                metrics::counter!(crate::meters::DECISIONS, "decision" => plan.decision.kind.as_str())
                    .increment(1);
                // The probe failed: its waiters now wait for the new end.
                self.revisit_all(&reopened).await;
                Ok(Some(FailureAnswer {
                    classification,
                    decision: plan.decision,
                    route: snapshot,
                }))
            }
            // Someone else moved the route first: this report is stale now.
            Err(RouteError::Store(StoreError::StaleGeneration { .. })) => {
                let route = self.load(id).await?;
                Ok(Some(stale_answer(classification, &route, now)))
            }
            Err(RouteError::Store(StoreError::StaleCircuit { .. })) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Records output or tool activity for the current invocation. An
    /// effect of an earlier invocation whose failure was already being
    /// recovered from came out of order: while the successor is not yet
    /// delivered it is withdrawn and the route stops for a person
    /// (`effect_after_failure`); once it was delivered, the route records
    /// that the work may have run twice (an attempt row and an event).
    pub async fn report_effect(&self, id: &RouteId, report: EffectReport) -> Result<RouteSnapshot> {
        if report.kind.as_str().trim().is_empty() || report.kind.as_str().len() > 64 {
            return Err(RouteError::Invalid(vec![FieldError::out_of_range(
                "kind", "length", 1, 64,
            )]));
        }
        for _ in 0..3 {
            let route = self.load(id).await?;
            let current = report.invocation_id == route.invocation_id
                && report.prompt_generation == route.prompt_generation
                && report.generation == route.generation;
            // Only an effect about another invocation reads the history.
            let (failed, outstanding) = if current {
                (None, false)
            } else {
                let failed = self
                    .store
                    .list_attempts(id.as_str())
                    .await?
                    .into_iter()
                    .filter(|a| a.invocation_id == report.invocation_id)
                    .max_by_key(|a| a.seq);
                let outstanding = failed.is_some() && self.successor_outstanding(&route).await?;
                (failed, outstanding)
            };
            let (next, commit, kind) =
                match plan::effect(&route, &report, failed.as_ref(), outstanding, self.now()) {
                    plan::EffectPlan::Nothing => return Ok(route.snapshot(self.now())),
                    plan::EffectPlan::Counted(next) => {
                        (*next, Commit::default(), EventKind::Effect)
                    }
                    plan::EffectPlan::Late {
                        route: next,
                        commit,
                    } => (*next, *commit, EventKind::LateEffect),
                };
            match self.apply(Change::after(&route, next, commit), kind).await {
                Err(RouteError::Store(StoreError::StaleGeneration { .. })) => continue,
                other => return other,
            }
        }
        Err(RouteError::Conflict(
            "the route kept changing; report the effect again".into(),
        ))
    }

    /// Whether the route's next attempt is scheduled or dispatched but not
    /// yet delivered: a wait is armed, or this generation's dispatch is
    /// pending or claimed (not acknowledged).
    pub(super) async fn successor_outstanding(&self, route: &Route) -> Result<bool> {
        if route.pending.is_some() {
            return Ok(true);
        }
        if !matches!(route.state, RouteState::Retrying | RouteState::Switching) {
            return Ok(false);
        }
        for d in self.store.list_dispatches(route.id.as_str()).await? {
            let state = super::model::dispatch_state(&d).map_err(RouteError::Corrupt)?;
            if Generation(d.generation) == route.generation
                && matches!(state, DispatchState::Pending | DispatchState::Claimed)
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The current invocation succeeded: the route is active again, a new
    /// cycle begins (exclusions, reset waits and retry budgets reset), and
    /// the next prompt is a new invocation (new id, prompt generation + 1),
    /// which the answer names.
    pub async fn report_success(
        &self,
        id: &RouteId,
        report: InvocationReport,
    ) -> Result<RouteSnapshot> {
        for _ in 0..CIRCUIT_ATTEMPTS {
            let route = self.load(id).await?;
            let current = report.generation == route.generation
                && report.invocation_id == route.invocation_id
                && report.prompt_generation == route.prompt_generation;
            if !current {
                return Err(RouteError::Stale(Box::new(route.snapshot(self.now()))));
            }
            let Some(state) = machine::next(route.state, Trigger::Success) else {
                return Err(self.invalid("success cannot be reported", &route));
            };
            let mut next = plan::success(&route, state);
            let mut commit = Commit::default();
            // Success proves the in-flight dispatch was delivered.
            if let Some(d) = self.claimed_dispatch(&route).await? {
                commit.ack_dispatch = Some((d.id, self.now().timestamp_millis()));
            }
            // A probe that succeeded closes its circuits. The profile is
            // read only when a circuit exists or the route is not on its
            // first candidate (failback may send it back).
            let mut circuits = self.circuits().await?;
            let profile = if circuits.set.is_empty() && route.candidate.index == 0 {
                None
            } else {
                self.profiles.get(route.profile_id.as_str()).await.ok()
            };
            let now = self.now();
            let closed = profile
                .as_ref()
                .and_then(|p| p.candidates.iter().find(|c| c.id == route.candidate.id))
                .map(|c| circuits.set.succeed(c.into(), route.id.as_str(), now))
                .unwrap_or_default();
            // The next invocation, not yet delivered, may go back to a
            // preferred candidate.
            commit.attempt = profile
                .as_ref()
                .and_then(|p| plan::failback(&mut next, p, &mut circuits.set, now));
            let kind = match commit.attempt {
                Some(_) => EventKind::Returned,
                None => EventKind::Success,
            };
            commit.circuits = circuits.writes(route.id.as_str());
            match self.apply_fenced(&route, next, commit, kind).await {
                Err(RouteError::Store(StoreError::StaleCircuit { .. })) => continue,
                Ok(snapshot) => {
                    // Its waiters go now, a few at a time.
                    self.revisit_all(&closed).await;
                    return Ok(snapshot);
                }
                Err(e) => return Err(e),
            }
        }
        Err(RouteError::Conflict(
            "shared circuits kept changing; report the success again".into(),
        ))
    }
}

/// The answer to a failure report that changes nothing.
fn stale_answer(
    classification: Classification,
    route: &Route,
    now: DateTime<Utc>,
) -> FailureAnswer {
    FailureAnswer {
        classification,
        decision: plan::stale(route),
        route: route.snapshot(now),
    }
}

/// The first HTTP error status in the evidence: a number, safe to show.
fn error_status(evidence: &Evidence) -> Option<u16> {
    evidence.items.iter().find_map(|i| match i {
        classify::Item::Http(h) => h.status.filter(|s| *s >= 400),
        _ => None,
    })
}
