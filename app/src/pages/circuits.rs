//! `/circuits`: the shared resource circuits — which provider, account,
//! model or agent profile is paused for everyone, until when, who probes
//! it and how many routes wait. Follows the route event stream (every
//! circuit change rides on a route change) and re-reads the list then.
//! Administrators can release a circuit or make it probe now from here.

use crate::api;
use crate::components::live::{show_time, use_route_events, LiveIndicator};
use crate::components::seed::Seed;
use crate::PageTitle;
use domain::circuit::{CircuitList, CircuitScope, CircuitStatus, CircuitView};
use domain::error::ApiError;
use domain::words::{circuit_status_words, safe_cause};
use leptos::either::Either;
use leptos::prelude::*;

#[component]
pub fn CircuitsPage() -> impl IntoView {
    let viewer = crate::use_viewer();
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
                let admin = viewer.await.is_ok_and(|v| v.may(domain::access::Permission::Admin));
                match data.await {
                    Ok(list) => view! { <CircuitCards initial=list admin/> }.into_any(),
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
fn CircuitCards(#[prop(into)] initial: Seed<CircuitList>, admin: bool) -> impl IntoView {
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
                        <CircuitCard circuit local admin reload=Callback::new(move |()| reload())/>
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
fn CircuitCard(
    circuit: CircuitView,
    local: RwSignal<bool>,
    admin: bool,
    reload: Callback<()>,
) -> impl IntoView {
    let state = circuit.state;
    let controls = (admin && state != CircuitStatus::Closed).then(|| {
        view! { <CircuitControls scope=circuit.scope resource=circuit.resource.clone() label=circuit.label.clone() reload/> }
    });
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
            {controls}
        </li>
    }
}

/// Release and Probe now, for an administrator. The list is read again
/// afterwards: the server's answer is the truth.
#[component]
fn CircuitControls(
    scope: CircuitScope,
    resource: String,
    label: String,
    reload: Callback<()>,
) -> impl IntoView {
    let resource = StoredValue::new(resource);
    let status = RwSignal::new(String::new());
    let busy = RwSignal::new(false);
    let run = move |control: &'static str| {
        busy.set(true);
        status.set(String::new());
        leptos::task::spawn_local(async move {
            let answer = api::control_circuit(scope, &resource.get_value(), control).await;
            busy.try_set(false);
            match answer {
                Ok(_) => reload.run(()),
                Err(e) => {
                    status.try_set(e.message);
                }
            }
        });
    };
    view! {
        <div class="circuit-controls" role="group" aria-label=format!("Override {label}")>
            <button type="button" disabled=move || busy.get() on:click=move |_| run("release")
                title="Close this circuit now: the routes waiting for it go, a few at a time">
                "Release"
            </button>
            <button type="button" disabled=move || busy.get() on:click=move |_| run("probe")
                title="End the pause now: the next route to go probes the resource">
                "Probe now"
            </button>
            <span class="notice problem" role="alert" hidden=move || status.with(String::is_empty)>{move || status.get()}</span>
        </div>
    }
}
