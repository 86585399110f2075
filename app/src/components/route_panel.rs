//! The live route panel: what a route is doing, why, until when and what
//! comes next, the manual actions its state allows, and its attempt
//! history. The server's snapshot is the truth; the panel renders the newest
//! one it has seen (from the page load, the event stream, a re-read after
//! reconnecting, or an action's answer) and never decides anything itself.
//!
//! Countdowns run from the absolute deadline and the server's clock: each
//! snapshot carries `server_time`, and the difference to the browser's clock
//! at receipt corrects a browser whose clock is wrong. Reaching zero changes
//! only the words; the backend fires the schedule.

use super::live::{show_time, use_browser_clock, use_route_events, LiveIndicator};
use super::seed::Seed;
use crate::api;
use domain::circuit::CircuitView;
use domain::error::ApiError;
use domain::ids::Generation;
use domain::profile::Profile;
use domain::route::machine::valid_actions;
use domain::route::Action;
use domain::route::{Attempt, DecisionKind, RouteSnapshot, RouteState};
use domain::words::*;
use leptos::either::Either;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// What the route page loads (on the server, then hydrated).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoutePageData {
    pub route: RouteSnapshot,
    pub attempts: Vec<Attempt>,
    /// `None` when the profile is gone or unreadable; the panel then names
    /// no next candidate.
    pub profile: Option<Profile>,
    /// The shared circuits (to say how many routes wait with this one).
    pub circuits: Vec<CircuitView>,
}

/// The browser's reader (`domain::wire_json`), field for field as serde's.
#[cfg(any(test, feature = "hydrate"))]
impl domain::wire_json::FromJson for RoutePageData {
    fn from_json(v: &serde_json::Value) -> Result<Self, domain::wire_json::Error> {
        let o = domain::wire_json::Fields::of(v)?;
        Ok(RoutePageData {
            route: o.get("route")?,
            attempts: o.get("attempts")?,
            profile: o.get("profile")?,
            circuits: o.get("circuits")?,
        })
    }
}

impl RoutePageData {
    pub async fn load(id: String) -> Result<RoutePageData, ApiError> {
        let route = api::get_route(id.clone()).await?;
        let attempts = api::route_attempts(id).await?;
        let profile = api::get_profile(route.profile_id.to_string()).await.ok();
        let circuits = api::list_circuits()
            .await
            .map(|l| l.circuits)
            .unwrap_or_default();
        Ok(RoutePageData {
            route,
            attempts,
            profile,
            circuits,
        })
    }
}

/// The panel's reactive copy of the route.
#[derive(Debug, Clone, Copy)]
struct LiveRoute {
    id: StoredValue<String>,
    snapshot: RwSignal<RouteSnapshot>,
    attempts: RwSignal<Vec<Attempt>>,
    profile: RwSignal<Option<Profile>>,
    circuits: RwSignal<Vec<CircuitView>>,
    /// Server clock minus browser clock (ms), once measured in the browser.
    offset_ms: RwSignal<Option<f64>>,
}

impl LiveRoute {
    /// Takes a snapshot if it is not older than the one shown. `fresh`
    /// snapshots were made just now (a read or an action's answer); events
    /// may be replays from before a reconnection.
    fn accept(self, next: RouteSnapshot, fresh: bool) {
        // Answers can arrive after the panel is gone: then there is nothing to do.
        if self
            .id
            .try_get_value()
            .is_none_or(|id| next.id != *id.as_str())
        {
            return;
        }
        self.observe(&next, fresh);
        let Some(current) = self.snapshot.try_get_untracked() else {
            return;
        };
        if !is_newer(&next, &current) {
            return;
        }
        let failed_again = next.generation != current.generation;
        let held = next.pending.as_ref().is_some_and(|p| p.circuit.is_some());
        self.snapshot.set(next);
        if failed_again {
            self.reload_attempts();
        }
        if held {
            self.reload_circuits();
        }
    }

    /// Measures the server's clock against the browser's. A replayed event
    /// carries an old `server_time` and so under-estimates the offset: the
    /// largest estimate since the last fresh one wins.
    fn observe(self, snapshot: &RouteSnapshot, fresh: bool) {
        #[cfg(feature = "hydrate")]
        {
            let seen = snapshot.server_time.timestamp_millis() as f64 - super::live::browser_now();
            self.offset_ms.try_update(|o| {
                *o = Some(match *o {
                    Some(current) if !fresh => current.max(seen),
                    _ => seen,
                })
            });
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = (snapshot, fresh);
    }

    fn reload_attempts(self) {
        let Some(id) = self.id.try_get_value() else {
            return;
        };
        leptos::task::spawn_local(async move {
            if let Ok(list) = api::route_attempts(id).await {
                // History only grows: an answer overtaken by a later one is
                // dropped.
                self.attempts.try_update(|current| {
                    if list.len() >= current.len() {
                        *current = list;
                    }
                });
            }
        });
    }

    /// The waiting count beside a circuit hold is the circuit's, so it is
    /// re-read whenever the route is (still) held.
    fn reload_circuits(self) {
        leptos::task::spawn_local(async move {
            if let Ok(list) = api::list_circuits().await {
                self.circuits.try_set(list.circuits);
            }
        });
    }

    /// Re-reads everything after (re)connecting to the event stream.
    fn refresh(self) {
        let Some(id) = self.id.try_get_value() else {
            return;
        };
        leptos::task::spawn_local(async move {
            if let Ok(route) = api::get_route(id).await {
                let profile_id = route.profile_id.to_string();
                self.accept(route, true);
                if let Ok(p) = api::get_profile(profile_id).await {
                    self.profile.try_set(Some(p));
                }
            }
        });
        self.reload_attempts();
    }

    /// Milliseconds until `deadline` by the server's clock.
    fn remaining_ms(
        self,
        deadline: chrono::DateTime<chrono::Utc>,
        browser_now: Option<f64>,
    ) -> i64 {
        let deadline = deadline.timestamp_millis();
        match (browser_now, self.offset_ms.get()) {
            (Some(now), Some(offset)) => deadline - (now + offset).round() as i64,
            // Rendering on the server (or just hydrated): the snapshot's own clock.
            _ => deadline - self.snapshot.with(|s| s.server_time.timestamp_millis()),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Notice {
    Sending(Action),
    Done(String),
    /// The route moved on before the action arrived.
    MovedOn(String),
    Problem(String),
}

impl Notice {
    /// The line's class and words. One view for every notice: a view per
    /// kind would be type-erased, and each erased view compiles its own
    /// async hydration path into the bundle.
    fn line(self) -> (&'static str, String) {
        match self {
            Notice::Sending(a) => ("status", format!("{}…", action_label(a))),
            Notice::Done(m) => ("status ok", m),
            Notice::MovedOn(m) | Notice::Problem(m) => ("status problem", m),
        }
    }
}

/// An island: the page's data travels with it as props.
#[island]
pub fn RoutePanel(#[prop(into)] data: Seed<RoutePageData>, can_act: bool) -> impl IntoView {
    let data = data.into_inner();
    let live = LiveRoute {
        id: StoredValue::new(data.route.id.to_string()),
        snapshot: RwSignal::new(data.route),
        attempts: RwSignal::new(data.attempts),
        profile: RwSignal::new(data.profile),
        circuits: RwSignal::new(data.circuits),
        offset_ms: RwSignal::new(None),
    };
    let clock = use_browser_clock();
    // The page's own snapshot counts as received at hydration; the re-read
    // on connecting replaces it moments later.
    Effect::new(move |_| live.observe(&live.snapshot.get_untracked(), true));
    let connection = use_route_events(
        Some(live.id.get_value()),
        move |event| live.accept(event.route, false),
        move || live.refresh(),
    );

    let notice = RwSignal::new(None::<(Generation, Notice)>);
    let busy = RwSignal::new(false);
    // The server renders the buttons disabled; they come on once they answer
    // (a page reached by a link is a fresh load, hydrated a moment later).
    let interactive = RwSignal::new(false);
    Effect::new(move |_| interactive.set(true));
    let act = move |action: Action| {
        let generation = live.snapshot.get_untracked().generation;
        busy.set(true);
        notice.set(Some((generation, Notice::Sending(action))));
        let id = live.id.get_value();
        leptos::task::spawn_local(async move {
            let answer = api::act_on_route(&id, action, generation).await;
            let (route, message) = match answer {
                Ok(route) => {
                    let done = Notice::Done(action_done(action, &route));
                    (Some(route), done)
                }
                Err(ApiError {
                    route: Some(route),
                    status: 409,
                    ..
                }) => {
                    let message = format!(
                        "The route moved on before your action arrived, so nothing was done. \
                         Above is where it is now ({}).",
                        state_words(route.state).to_ascii_lowercase()
                    );
                    (Some(*route), Notice::MovedOn(message))
                }
                Err(ApiError {
                    route: Some(route),
                    message,
                    ..
                }) => (Some(*route), Notice::Problem(message)),
                Err(e) => (None, Notice::Problem(e.message)),
            };
            let shown = route.as_ref().map(|r| r.generation).unwrap_or(generation);
            if let Some(route) = route {
                live.accept(route, true);
            }
            notice.try_set(Some((shown, message)));
            busy.try_set(false);
        });
    };

    let snapshot = live.snapshot;
    let state = move || snapshot.with(|s| s.state);
    let newest_attempt = move || live.attempts.with(|a| a.first().cloned());
    let candidate_line = move || {
        let (label, id) = snapshot.with(|s| (s.candidate.label.clone(), s.candidate.id.clone()));
        let position = live.profile.with(|p| {
            p.as_ref().and_then(|p| {
                let i = p.candidates.iter().position(|c| c.id == id)?;
                Some(format!("candidate {} of {}", i + 1, p.candidates.len()))
            })
        });
        (label, position)
    };
    // On a fallback (a lower candidate of a profile that returns to its
    // first): which one, and where the route goes back to.
    let fallback_line = move || {
        live.profile.with(|p| {
            let first = p.as_ref().and_then(returns_to);
            snapshot.with(|s| fallback_words(s, first))
        })
    };
    let cause_line = move || {
        snapshot.with(|s| {
            let class = s.last_failure.as_ref().map(|f| f.class)?;
            Some((cause(s)?, class))
        })
    };
    let retry_line = move || {
        let newest = newest_attempt();
        snapshot.with(|s| retry_words(s, newest.as_ref()))
    };
    let deadline = move || snapshot.with(|s| s.pending.as_ref().map(|p| p.deadline));
    let hold_line = move || {
        let hold = snapshot.with(|s| s.pending.as_ref().and_then(|p| p.circuit.clone()))?;
        let until = show_time(hold.until, clock.get().is_some());
        Some(live.circuits.with(|all| {
            let circuit = all
                .iter()
                .find(|c| c.scope == hold.scope && c.resource == hold.resource);
            circuit_hold_words(&hold, circuit, &until)
        }))
    };
    let reason_line = move || {
        snapshot.with(|s| {
            (s.state == RouteState::ActionRequired)
                .then(|| stop_words(s))
                .flatten()
        })
    };
    let next_line = move || {
        live.profile
            .with(|p| snapshot.with(|s| next_outcome(s, p.as_ref())))
    };
    let visible_notice = move || {
        notice.get().and_then(|(generation, n)| {
            (matches!(n, Notice::Sending(_)) || snapshot.with(|s| s.generation) == generation)
                .then_some(n)
        })
    };
    let actions = move || {
        if can_act {
            valid_actions(state())
        } else {
            Default::default()
        }
    };

    // Not `<Show>` (type-erased views; see the route list).
    let has_actions = Memo::new(move |_| !actions().is_empty());

    view! {
        <section class="panel route-panel" aria-labelledby="route-state" data-state=move || state().as_str()>
            <div class="route-state-row">
                <h2 id="route-state" class="route-state">{move || state_words(state())}</h2>
                <LiveIndicator connection announce=true/>
            </div>
            <dl class="route-facts">
                <div class="fact">
                    <dt>"Candidate"</dt>
                    <dd class="route-candidate">
                        {move || candidate_line().0}
                        {move || candidate_line().1.map(|p| view! { <span class="muted">{format!(" ({p})")}</span> })}
                    </dd>
                </div>
                {move || fallback_line().map(|text| view! {
                    <div class="fact fact-wide">
                        <dt>"Fallback"</dt>
                        <dd class="route-fallback">{text}</dd>
                    </div>
                })}
                {move || cause_line().map(|(text, class)| view! {
                    <div class="fact">
                        <dt>"Cause"</dt>
                        <dd class="route-cause">
                            <span>{text}</span>" "
                            <span class="badge" data-class=class.as_str()>{class_words(class)}</span>
                        </dd>
                    </div>
                })}
                {move || retry_line().map(|text| view! {
                    <div class="fact">
                        <dt>"Retry"</dt>
                        <dd class="route-retry">{text}</dd>
                    </div>
                })}
                {move || deadline().map(|d| {
                    let remaining = move || countdown(live.remaining_ms(d, clock.get()));
                    view! {
                        <div class="fact">
                            <dt>"Deadline"</dt>
                            <dd>
                                <time class="route-deadline" datetime=d.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)>
                                    {move || show_time(d, clock.get().is_some())}
                                </time>
                                " "
                                <span class="route-countdown">{remaining}</span>
                            </dd>
                        </div>
                    }
                })}
                {move || hold_line().map(|text| view! {
                    <div class="fact fact-wide">
                        <dt>"Waiting for"</dt>
                        <dd class="route-circuit"><a href="/circuits">{text}</a></dd>
                    </div>
                })}
                {move || reason_line().map(|text| view! {
                    <div class="fact">
                        <dt>"Why"</dt>
                        <dd class="route-reason">{text}</dd>
                    </div>
                })}
                <div class="fact">
                    <dt>"Next"</dt>
                    <dd class="route-next">{next_line}</dd>
                </div>
            </dl>
            {move || has_actions.get().then(|| view! {
                <div class="route-actions" role="group" aria-label="Route actions">
                    // One place per action, in the state table's order, each
                    // button there while its action is allowed: what a keyed
                    // list of the allowed actions would show, without one.
                    {Action::ALL
                        .iter()
                        .map(|&action| {
                            let offered = Memo::new(move |_| actions().contains(&action));
                            move || offered.get().then(|| view! {
                                <button
                                    type="button"
                                    class=action_class(action)
                                    disabled=move || busy.get() || !interactive.get()
                                    on:click=move |_| act(action)
                                >
                                    {action_label(action)}
                                </button>
                            })
                        })
                        .collect_view()}
                </div>
            })}
            <div class="route-notice" role="status" aria-label="Action result">
                {move || visible_notice().map(|n| {
                    let (class, text) = n.line();
                    view! { <p class=class>{text}</p> }
                })}
            </div>
        </section>
        <AttemptHistory attempts=live.attempts clock/>
    }
}

#[component]
fn AttemptHistory(attempts: RwSignal<Vec<Attempt>>, clock: RwSignal<Option<f64>>) -> impl IntoView {
    let any = Memo::new(move |_| attempts.with(|a| !a.is_empty()));
    view! {
        <section class="history" aria-labelledby="history-heading">
            <h2 id="history-heading">"Attempt history"</h2>
            <p class="explain">
                "Every failure this route reported, newest first, with the decision taken and the policy that was in force then."
            </p>
            {move || if any.get() {
                Either::Left(view! {
                <table class="attempts">
                    <thead>
                        <tr>
                            <th scope="col">"#"</th>
                            <th scope="col">"Candidate"</th>
                            <th scope="col">"Error"</th>
                            <th scope="col">"Decision"</th>
                            <th scope="col">"Deadline"</th>
                            <th scope="col">"Outcome"</th>
                            <th scope="col">"Policy in force"</th>
                        </tr>
                    </thead>
                    <tbody>
                        {move || attempts.get().into_iter().map(|a| view! {
                            <AttemptRow attempt=a clock/>
                        }).collect_view()}
                    </tbody>
                </table>
                })
            } else {
                Either::Right(view! { <p class="notice">"No failures reported yet."</p> })
            }}
        </section>
    }
}

#[component]
fn AttemptRow(attempt: Attempt, clock: RwSignal<Option<f64>>) -> impl IntoView {
    let deadline = attempt.deadline;
    let class = attempt.class;
    // A return to a preferred candidate is no failure: its row says where
    // the route came back from, and why it could.
    let returned = attempt.decision == DecisionKind::Returned;
    let error = if returned {
        Either::Left(view! {
            <span class="returned-from">
                {attempt
                    .returned
                    .as_ref()
                    .map(|r| format!("Returned from {}", r.from.label))
                    .unwrap_or_else(|| "Returned".to_string())}
            </span>
        })
    } else {
        Either::Right(view! {
                <span>
                    <span class="error-cause">{safe_cause(&attempt.code)}</span>
                    " "
                    <code class="code">{attempt.code.clone()}</code>
                    " · "
                    <span class="muted">{class_words(class)}</span>
                </span>
                {classification_words(&attempt).map(|w| view! { <span class="judged muted">{w}</span> })}
                {explain_words(&attempt).map(|w| view! { <span class="judged muted explain">{w}</span> })}
        })
    };
    view! {
        <tr class:returned=returned data-decision=attempt.decision.as_str()>
            <td data-label="#" class="num">{attempt.seq}</td>
            <td data-label="Candidate">{attempt.candidate.label.clone()}</td>
            <td data-label="Error">
                {error}
            </td>
            <td data-label="Decision">{decision_words(&attempt)}</td>
            <td data-label="Deadline">
                {move || match deadline {
                    Some(d) => show_time(d, clock.get().is_some()),
                    None => "—".to_string(),
                }}
            </td>
            <td data-label="Outcome">{outcome_words(&attempt.outcome)}</td>
            <td data-label="Policy in force" class="policy">
                {if returned { "—".to_string() } else { policy_words(&attempt) }}
            </td>
        </tr>
    }
}

/// Actions that end automatic recovery look like it.
fn action_class(action: Action) -> &'static str {
    match action {
        Action::Cancel | Action::Stop => "danger",
        Action::RetryNow | Action::SkipNow => "secondary",
    }
}
