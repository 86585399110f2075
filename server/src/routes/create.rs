//! Opening routes: on a usable profile, at the first candidate its
//! circuits let a new route try (or held, or stopped when every one is
//! held), with an idempotency key replayed rather than opening a second
//! route, and with who opened it recorded for later reports and claims.

use super::error::{Result, RouteError};
use super::idempotency::{self, Creation, RouteKey};
use super::model::Route;
use super::plan;
use super::service::{Change, CIRCUIT_ATTEMPTS};
use super::Routes;
use crate::circuits::CircuitKey;
use crate::store::{Commit, RouteKeyRow, StoreError};
use domain::api::CreateRoute;
use domain::ids::RouteId;
use domain::policy::{ErrorClass, FieldError};
use domain::route::{EventKind, RouteSnapshot, RouteState};

impl Routes {
    /// Opens a route on a usable profile, at its first candidate.
    pub async fn create(&self, req: CreateRoute) -> Result<RouteSnapshot> {
        Ok(self.create_keyed(req, None).await?.0)
    }

    /// [`Routes::create`] with an idempotency key: the route this key
    /// already created for the same request, if there is one, else a new
    /// route with the key stored in the transaction that inserts it. Two
    /// creations with one key at once make one route: the second's key is
    /// taken when it commits, and it answers the first's route.
    pub async fn create_keyed(
        &self,
        req: CreateRoute,
        key: Option<RouteKey>,
    ) -> Result<(RouteSnapshot, Creation)> {
        self.create_opened_by(req, key, None).await
    }

    /// [`Routes::create_keyed`], recording `opened_by` (a token's or a
    /// person's id) as the route's opener in the transaction that inserts
    /// it: reports and claims for the route then need that principal or
    /// `routes:any`. Without one, only `routes:any` may report.
    pub async fn create_opened_by(
        &self,
        req: CreateRoute,
        key: Option<RouteKey>,
        opened_by: Option<&str>,
    ) -> Result<(RouteSnapshot, Creation)> {
        // The key with the request it is sent with, in canonical form.
        let keyed = key.map(|k| (k, idempotency::request_of(&req)));
        if let Some((k, request)) = &keyed {
            if let Some(replay) = self.replay(k, request).await? {
                return Ok((replay, Creation::Replayed));
            }
        }
        let profile = self.profiles.get_usable(req.profile_id.as_str()).await?;
        let first = profile
            .candidates
            .first()
            .ok_or_else(|| RouteError::ProfileUnusable("the profile has no candidates".into()))?;
        if req.caller.reference.chars().count() > 200 {
            return Err(RouteError::Invalid(vec![FieldError::out_of_range(
                "caller.ref",
                "length",
                0,
                200,
            )]));
        }
        // Shown in page titles and the route list.
        domain::policy::text::check_visible("caller.ref", &req.caller.reference)
            .map_err(|e| RouteError::Invalid(vec![e]))?;
        let now = self.now();
        for _ in 0..CIRCUIT_ATTEMPTS {
            let mut route = Route::open(profile.id.clone(), req.caller.clone(), first, now);
            let mut circuits = self.circuits().await?;
            // The first candidate its circuits let a new route try; when
            // every one is held, the one whose hold ends first, once it
            // ends (or a stop, when that is too far away).
            let mut schedule = None;
            match plan::select(
                route.id.as_str(),
                &profile,
                &mut circuits.set,
                self.settings.max_hold_wait,
                now,
            ) {
                plan::Start::Now(index) => {
                    if index != route.candidate.index {
                        route.move_to(index, &profile.candidates[index]);
                    }
                }
                plan::Start::Held(index, wait) => {
                    let candidate = &profile.candidates[index];
                    route.move_to(index, candidate);
                    route.state = RouteState::Switching;
                    // Nothing failed on this route yet: what the circuit
                    // holding it is open for says what follows.
                    let code = wait
                        .hold
                        .as_ref()
                        .and_then(|h| {
                            circuits.set.get(&CircuitKey {
                                scope: h.scope,
                                resource: h.resource.clone(),
                            })
                        })
                        .map(|c| c.code.clone())
                        .unwrap_or_default();
                    let class = self
                        .catalogue
                        .current()
                        .class_of(&code)
                        .unwrap_or(ErrorClass::Transient);
                    let p = class
                        .policy_class()
                        .map(|pc| *candidate.policy.class(pc))
                        .unwrap_or_default();
                    schedule = Some(wait.apply(&mut route, &p, &code, class, now));
                }
                // Nothing failed on this route yet, so there is no failure
                // to name the hold with: the Circuits page lists them.
                plan::Start::AllHeld(_) => {
                    route.state = RouteState::ActionRequired;
                    route.reason = Some(domain::route::StopReason::AllCandidatesHeld);
                }
            }
            let route_key = keyed.as_ref().map(|(k, request)| RouteKeyRow {
                scope: k.scope.clone(),
                key: k.key.as_str().to_string(),
                route_id: route.id.to_string(),
                request: request.clone(),
                created_at: now.timestamp_millis(),
            });
            let commit = Commit {
                circuits: circuits.writes(route.id.as_str()),
                route_key,
                opened_by: opened_by.map(str::to_string),
                schedule,
                ..Commit::default()
            };
            let change = Change {
                route,
                expected: None,
                from: None,
                commit,
            };
            match (self.apply(change, EventKind::Created).await, &keyed) {
                (Err(RouteError::Store(StoreError::StaleCircuit { .. })), _) => continue,
                // Answers come after their batch commits, so the route
                // that took the key is there to be read.
                (Err(RouteError::Store(StoreError::KeyTaken)), Some((k, request))) => {
                    return match self.replay(k, request).await? {
                        Some(replay) => Ok((replay, Creation::Replayed)),
                        // Keys are never deleted: a taken key reads back.
                        None => Err(RouteError::Corrupt(format!(
                            "idempotency key `{}` was taken, yet names no route",
                            k.key.as_str()
                        ))),
                    };
                }
                (other, _) => return other.map(|route| (route, Creation::Created)),
            }
        }
        Err(RouteError::Conflict(
            "shared circuits kept changing; create the route again".into(),
        ))
    }

    /// The route `key` created, now, if it created one; the key reused for
    /// a different request is refused.
    pub(super) async fn replay(
        &self,
        key: &RouteKey,
        request: &str,
    ) -> Result<Option<RouteSnapshot>> {
        let Some(row) = self
            .store
            .get_route_key(&key.scope, key.key.as_str())
            .await?
        else {
            return Ok(None);
        };
        if row.request != request {
            return Err(RouteError::Invalid(vec![idempotency::reused(
                &row.route_id,
            )]));
        }
        self.get(&RouteId(row.route_id)).await.map(Some)
    }
}
