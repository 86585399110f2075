//! `/circuits`: the shared resource circuits — which provider, account,
//! model or agent profile is paused for everyone, until when, who probes
//! it and how many routes wait. Follows the route event stream (every
//! circuit change rides on a route change) and re-reads the list then.

use crate::api;
use crate::components::live::{show_time, use_route_events, LiveIndicator};
use crate::components::seed::Seed;
use crate::PageTitle;
use domain::circuit::{CircuitList, CircuitStatus, CircuitView};
use domain::error::ApiError;
use domain::words::{circuit_status_words, safe_cause};
use leptos::either::Either;
use leptos::prelude::*;

#[component]
pub fn CircuitsPage() -> impl IntoView {
    let data = Resource::new(|| (), |_| api::list_circuits());
    view! {
        <PageTitle text="Circuits · Provider Error Recovery"/>
        <h1>"Circuits"</h1>
        <p class="explain">
            "When a provider, an account, a model or an agent profile fails for everyone, its circuit \
             pauses it: the routes on it wait, or move to another candidate as their policy says, and \
             one route's attempt probes it when the pause ends. The probe's success releases the \
             others a few at a time; its failure pauses the resource again."
        </p>
        <Suspense fallback=|| view! { <p class="notice">"Loading circuits…"</p> }>
            {move || Suspend::new(async move {
                match data.await {
                    Ok(list) => view! { <CircuitCards initial=list/> }.into_any(),
                    Err(ApiError { message, .. }) => {
                        view! { <p class="notice problem" role="alert">{message}</p> }.into_any()
                    }
                }
            })}
        </Suspense>
    }
}

/// The live part of the page (an island; the list travels as props).
#[island]
fn CircuitCards(#[prop(into)] initial: Seed<CircuitList>) -> impl IntoView {
    let circuits = RwSignal::new(initial.into_inner().circuits);
    let reload = move || {
        leptos::task::spawn_local(async move {
            if let Ok(list) = api::list_circuits().await {
                circuits.try_set(list.circuits);
            }
        });
    };
    let connection = use_route_events(None, move |_| reload(), reload);
    // Times in the viewer's zone once hydrated (UTC while rendering on the server).
    let local = RwSignal::new(false);
    Effect::new(move |_| local.set(true));
    // Not `<Show>` (type-erased views; see the route list).
    let any = Memo::new(move |_| circuits.with(|c| !c.is_empty()));
    view! {
        <div class="circuit-list">
            <LiveIndicator connection announce=true/>
            {move || if any.get() {
                Either::Left(view! {
                <ul class="circuit-cards">
                    {move || circuits.get().into_iter().map(|circuit| view! {
                        <CircuitCard circuit local/>
                    }).collect_view()}
                </ul>
                })
            } else {
                Either::Right(view! {
                    <p class="notice">"No circuits yet. A circuit appears when a confident provider, account, model or profile failure names a resource."</p>
                })
            }}
        </div>
    }
}

#[component]
fn CircuitCard(circuit: CircuitView, local: RwSignal<bool>) -> impl IntoView {
    let state = circuit.state;
    let until = circuit.until;
    let probe = circuit.probe_holder.clone().zip(circuit.probe_until);
    let waiting = match circuit.routes_waiting {
        1 => "1 route".to_string(),
        n => format!("{n} routes"),
    };
    view! {
        <li class="circuit-card" data-state=state.as_str()>
            <div class="circuit-head">
                <h2 class="circuit-label">{circuit.label.clone()}</h2>
                <span class="state-badge" data-circuit=state.as_str()>{circuit_status_words(state)}</span>
            </div>
            <dl class="route-facts">
                <div class="fact">
                    <dt>"Scope"</dt>
                    <dd>{circuit.scope.as_str()}" · "<span class="route-id">{circuit.resource.clone()}</span></dd>
                </div>
                {until.map(|t| view! {
                    <div class="fact">
                        <dt>"Paused until"</dt>
                        <dd><time datetime=t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)>{move || show_time(t, local.get())}</time></dd>
                    </div>
                })}
                {probe.map(|(holder, lease)| view! {
                    <div class="fact">
                        <dt>"Probe"</dt>
                        <dd>
                            <a href=format!("/routes/{holder}") class="route-id">{holder.clone()}</a>
                            <span class="muted">" until "<time datetime=lease.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)>{move || show_time(lease, local.get())}</time></span>
                        </dd>
                    </div>
                })}
                <div class="fact">
                    <dt>"Waiting"</dt>
                    <dd class="circuit-waiting">{waiting}</dd>
                </div>
                {(state != CircuitStatus::Closed).then(|| view! {
                    <div class="fact">
                        <dt>"Cause"</dt>
                        <dd>
                            {safe_cause(&circuit.code)}
                            {(circuit.openings > 1).then(|| view! {
                                <span class="muted">{format!(" · paused {} times in a row", circuit.openings)}</span>
                            })}
                        </dd>
                    </div>
                })}
            </dl>
        </li>
    }
}
