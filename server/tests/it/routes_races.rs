//! Races and faults: a timer, a manual action and a provider report on one
//! route at once (1,000 rounds per engine), and writes that fail.

use crate::support::{overloaded, policy, services, start_time, Engine, TestDb};
use domain::api::{ActionRequest, CreateRoute, EffectReport};
use domain::route::{Action, StopReason};
use domain::route::{Caller, CallerKind, RouteState};
use serde_json::json;
use server::clock::Clock;

const ROUNDS: usize = 1_000;

async fn profile(state: &server::http::AppState) -> domain::ids::ProfileId {
    let p = state
        .profiles
        .create(&json!({"name": "race", "candidates": [
            {"label": "A", "agent": "a", "policy": {"version": 1, "transient": policy(3, 5, 0, "skip"), "hard": policy(0, 0, 0, "skip")}},
            {"label": "B", "agent": "b"}
        ]}))
        .await
        .unwrap();
    p.id
}

fn failure(route: &domain::route::RouteSnapshot) -> serde_json::Value {
    json!({"generation": route.generation, "invocation_id": route.invocation_id,
           "prompt_generation": route.prompt_generation, "phase": "prompt", "items": overloaded()})
}

async fn timer_action_and_report_race(engine: Engine) {
    let db = TestDb::new(engine).await;
    let clock = Clock::manual(start_time());
    let state = services(db.store.clone(), clock.clone());
    let routes = state.routes.clone();
    let profile_id = profile(&state).await;
    let mut wins = [0usize; 3];
    for round in 0..ROUNDS {
        let route = routes
            .create(CreateRoute {
                profile_id: profile_id.clone(),
                caller: Caller {
                    kind: CallerKind::Kanban,
                    reference: format!("r{round}"),
                },
            })
            .await
            .unwrap();
        let waiting = routes
            .report_failure(&route.id, &failure(&route))
            .await
            .unwrap()
            .route;
        assert_eq!(waiting.state, RouteState::RetryWait);
        let g = waiting.generation;
        clock.advance(chrono::Duration::seconds(5));

        // Three actors at once: the timer, a person, and the provider's
        // late output for the failed invocation.
        let (fired, acted, effect) = tokio::join!(
            {
                let routes = routes.clone();
                async move { routes.fire_due().await }
            },
            {
                let routes = routes.clone();
                let id = route.id.clone();
                async move {
                    routes
                        .act(
                            &id,
                            ActionRequest {
                                action: Action::Cancel,
                                expected_generation: g,
                            },
                        )
                        .await
                }
            },
            {
                let routes = routes.clone();
                let id = route.id.clone();
                let report = EffectReport {
                    generation: route.generation,
                    invocation_id: route.invocation_id.clone(),
                    prompt_generation: route.prompt_generation,
                    kind: "agent_message_chunk".into(),
                    provider_session_id: None,
                };
                async move { routes.report_effect(&id, report).await }
            }
        );
        let fired = fired.unwrap();
        let final_route = routes.get(&route.id).await.unwrap();
        // The effect is late whatever happens first, so automatic work
        // always ends here: a person decides, and nothing is dispatched.
        // Each actor moves the route at most once: the timer (which the
        // late effect then undoes, withdrawing its dispatch), or the
        // person, or the effect.
        assert_eq!(
            final_route.generation,
            g + 1 + fired as i64,
            "round {round}: {final_route:?}"
        );
        assert_eq!(
            final_route.state,
            RouteState::ActionRequired,
            "round {round}"
        );
        let dispatches = db.store.list_dispatches(route.id.as_str()).await.unwrap();
        let live: Vec<_> = dispatches.iter().filter(|d| d.state != "void").collect();
        assert!(
            live.is_empty(),
            "round {round}: no dispatch after a stop: {live:?}"
        );
        assert!(effect.is_ok(), "round {round}: {effect:?}");
        match final_route.reason {
            // The timer fired, then the late output withdrew its dispatch;
            // the person's cancel named the generation the timer left.
            Some(StopReason::EffectAfterFailure) if fired == 1 => {
                wins[0] += 1;
                assert!(acted.is_err(), "the action lost and was told so");
            }
            Some(StopReason::CancelledByUser) => {
                wins[1] += 1;
                assert_eq!(fired, 0);
                assert!(acted.is_ok());
            }
            Some(StopReason::EffectAfterFailure) => {
                wins[2] += 1;
                // A cancel that arrives after the stop is the idempotent
                // no-op (200 with the stopped route).
                if let Ok(r) = &acted {
                    assert_eq!(r.generation, g + 1);
                }
            }
            other => panic!("round {round}: unexpected reason {other:?}"),
        }
        // No schedule is left armed for the route.
        let events = db
            .store
            .events_after(0, Some(route.id.as_str()), 100)
            .await
            .unwrap();
        let generations: Vec<_> = events
            .iter()
            .map(|e| {
                let g = serde_json::from_str::<domain::route::RouteSnapshot>(&e.payload)
                    .unwrap()
                    .generation;
                (e.kind.as_str(), g)
            })
            .collect();
        // Generations only grow; a late effect recorded after the person's
        // stop keeps the stopped route's generation.
        assert!(
            generations
                .windows(2)
                .all(|w| w[0].1 < w[1].1 || (w[1].0 == "route.late_effect" && w[0].1 == w[1].1)),
            "round {round}: generations {generations:?}"
        );
    }
    assert_eq!(db.store.count_schedules("armed").await.unwrap(), 0);
    assert_eq!(wins.iter().sum::<usize>(), ROUNDS);
    eprintln!(
        "{engine:?}: timer then late effect {}, cancel won {}, effect won {}",
        wins[0], wins[1], wins[2]
    );
}

/// A failed write (a read-only database) arms no timer and creates no dispatch.
async fn failed_writes_schedule_nothing(engine: Engine) {
    let db = TestDb::new(engine).await;
    let clock = Clock::manual(start_time());
    let state = services(db.store.clone(), clock.clone());
    let profile_id = profile(&state).await;
    let caller = Caller {
        kind: CallerKind::Workflow,
        reference: "w".into(),
    };
    let fresh = state
        .routes
        .create(CreateRoute {
            profile_id: profile_id.clone(),
            caller: caller.clone(),
        })
        .await
        .unwrap();
    let waiting = state
        .routes
        .create(CreateRoute { profile_id, caller })
        .await
        .unwrap();
    let waiting = state
        .routes
        .report_failure(&waiting.id, &failure(&waiting))
        .await
        .unwrap()
        .route;
    assert_eq!(db.store.count_schedules("armed").await.unwrap(), 1);

    let read_only = services(db.read_only_store().await, clock.clone());
    // A failure report cannot be committed: nothing is scheduled.
    let err = read_only
        .routes
        .report_failure(&fresh.id, &failure(&fresh))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            server::routes::RouteError::Store(server::store::StoreError::Unavailable(_))
        ),
        "{err:?}"
    );
    assert_eq!(db.store.count_schedules("armed").await.unwrap(), 1);
    assert_eq!(
        state.routes.get(&fresh.id).await.unwrap().state,
        RouteState::Active
    );
    // A due timer cannot be committed: no dispatch, and it stays armed for later.
    clock.advance(chrono::Duration::seconds(5));
    assert!(read_only.routes.fire_due().await.is_err());
    assert!(db
        .store
        .list_dispatches(waiting.id.as_str())
        .await
        .unwrap()
        .is_empty());
    assert_eq!(db.store.count_schedules("armed").await.unwrap(), 1);
    assert_eq!(
        state.routes.get(&waiting.id).await.unwrap().state,
        RouteState::RetryWait
    );
    // Once the database is writable again, the timer fires exactly once.
    assert_eq!(state.routes.fire_due().await.unwrap(), 1);
    assert_eq!(state.routes.fire_due().await.unwrap(), 0);
    assert_eq!(
        db.store
            .list_dispatches(waiting.id.as_str())
            .await
            .unwrap()
            .len(),
        1
    );
}

on_both_engines!(flavor = multi_thread; timer_action_and_report_race, failed_writes_schedule_nothing);
