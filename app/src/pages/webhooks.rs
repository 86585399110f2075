//! `/admin/webhooks`: webhook subscriptions, for administrators — list,
//! add (the events picked from the kinds there are), remove, and each
//! subscription's delivery log. The same as `kandev-recovery webhooks …`
//! and the API; the rules (SSRF, the secret) are the server's.

use crate::api;
use crate::PageTitle;
use domain::error::ApiError;
use domain::webhook::{DeliveryLog, Webhook, WebhookEvent};
use leptos::prelude::*;

#[component]
pub fn WebhooksPage() -> impl IntoView {
    let viewer = crate::use_viewer();
    view! {
        <PageTitle text="Webhooks · Provider Error Recovery"/>
        <h1>"Webhooks"</h1>
        <p class="explain">
            "Each subscription is told about the events it names with a signed POST, retried for up to \
             a day while its receiver fails. docs/webhooks.md says how a receiver verifies the signature."
        </p>
        <Suspense fallback=|| view! { <p class="notice">"Loading…"</p> }>
            {move || Suspend::new(async move {
                if viewer.await.is_ok_and(|v| v.may(domain::access::Permission::Admin)) {
                    view! { <WebhooksAdmin/> }.into_any()
                } else {
                    view! {
                        <p class="notice problem" role="alert">"Managing webhooks needs the admin permission."</p>
                    }
                    .into_any()
                }
            })}
        </Suspense>
    }
}

/// The subscriptions and the form (an island: read and changed in the
/// browser; after a change the list is read again).
#[island]
fn WebhooksAdmin() -> impl IntoView {
    let hooks: RwSignal<Option<Result<Vec<Webhook>, ApiError>>> = RwSignal::new(None);
    let reload = move || {
        leptos::task::spawn_local(async move {
            hooks.try_set(Some(api::list_webhooks().await));
        });
    };
    Effect::new(move |_| reload());
    let url = RwSignal::new(String::new());
    let secret = RwSignal::new(String::new());
    let picked = RwSignal::new(Vec::<WebhookEvent>::new());
    let status = RwSignal::new(String::new());
    let busy = RwSignal::new(false);
    let add = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        busy.set(true);
        status.set(String::new());
        leptos::task::spawn_local(async move {
            let answer = api::create_webhook(
                &url.get_untracked(),
                &picked.get_untracked(),
                &secret.get_untracked(),
            )
            .await;
            busy.try_set(false);
            match answer {
                Ok(h) => {
                    status.try_set(format!("Subscribed {}.", h.url));
                    url.try_set(String::new());
                    secret.try_set(String::new());
                    picked.try_set(Vec::new());
                    reload();
                }
                Err(e) => {
                    let fields: Vec<String> = e
                        .errors
                        .iter()
                        .map(|f| format!("{}: {}", f.field, f.message))
                        .collect();
                    status.try_set(if fields.is_empty() {
                        e.message
                    } else {
                        fields.join("; ")
                    });
                }
            }
        });
    };
    view! {
        <section aria-labelledby="webhook-list-heading">
            <h2 id="webhook-list-heading">"Subscriptions"</h2>
            {move || match hooks.get() {
                None => view! { <p class="notice">"Loading webhooks…"</p> }.into_any(),
                Some(Err(e)) => view! { <p class="notice problem" role="alert">{e.message}</p> }.into_any(),
                Some(Ok(list)) if list.is_empty() => view! { <p class="notice">"No webhook yet."</p> }.into_any(),
                Some(Ok(list)) => view! {
                    <ul class="webhooks">
                        {list.into_iter().map(|h| view! { <WebhookCard hook=h reload=Callback::new(move |()| reload())/> }).collect_view()}
                    </ul>
                }
                .into_any(),
            }}
        </section>
        <section aria-labelledby="webhook-add-heading">
            <h2 id="webhook-add-heading">"Add a webhook"</h2>
            <form class="webhook-form" on:submit=add>
                <label>"URL"
                    <input type="text" name="url" placeholder="https://ops.example.com/kandev"
                        prop:value=move || url.get() on:input=move |ev| url.set(event_target_value(&ev))/>
                </label>
                <label>"Signing secret (16 characters or more)"
                    <input type="text" name="secret" autocomplete="off"
                        prop:value=move || secret.get() on:input=move |ev| secret.set(event_target_value(&ev))/>
                </label>
                <fieldset>
                    <legend>"Events"</legend>
                    {WebhookEvent::ALL.iter().copied().map(|event| view! {
                        <label class="check">
                            <input type="checkbox" name="events" value=event.as_str()
                                prop:checked=move || picked.with(|p| p.contains(&event))
                                on:change=move |ev| {
                                    let on = event_target_checked(&ev);
                                    picked.update(|p| {
                                        p.retain(|e| *e != event);
                                        if on { p.push(event); }
                                    });
                                }/>
                            <code>{event.as_str()}</code>
                        </label>
                    }).collect_view()}
                </fieldset>
                <button type="submit" class="primary" disabled=move || busy.get()>"Subscribe"</button>
                <p role="status" class="notice">{move || status.get()}</p>
            </form>
        </section>
    }
}

#[component]
fn WebhookCard(hook: Webhook, reload: Callback<()>) -> impl IntoView {
    let id = StoredValue::new(hook.id.clone());
    let log: RwSignal<Option<Result<DeliveryLog, ApiError>>> = RwSignal::new(None);
    let problem = RwSignal::new(String::new());
    let show_log = move |_| {
        leptos::task::spawn_local(async move {
            log.try_set(Some(api::webhook_deliveries(&id.get_value()).await));
        });
    };
    let remove = move |_| {
        leptos::task::spawn_local(async move {
            match api::remove_webhook(&id.get_value()).await {
                Ok(()) => reload.run(()),
                Err(e) => {
                    problem.try_set(e.message);
                }
            }
        });
    };
    let events = hook
        .events
        .iter()
        .map(|e| e.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    view! {
        <li class="webhook" aria-label=hook.url.clone()>
            <h3 class="route-id">{hook.url.clone()}</h3>
            <p>{events}</p>
            <p class="muted">{format!("{} pending, {} failed", hook.pending, hook.failed)}
                {hook.last_error.clone().map(|e| format!(" · last error: {e}"))}</p>
            <div class="actions">
                <button type="button" on:click=show_log>"Delivery log"</button>
                <button type="button" class="danger" on:click=remove>"Remove"</button>
            </div>
            <p class="notice problem" role="alert" hidden=move || problem.with(String::is_empty)>{move || problem.get()}</p>
            {move || log.get().map(|l| match l {
                Err(e) => view! { <p class="notice problem" role="alert">{e.message}</p> }.into_any(),
                Ok(l) if l.deliveries.is_empty() => view! { <p class="notice">"No delivery yet."</p> }.into_any(),
                Ok(l) => view! {
                    <table class="deliveries">
                        <caption>"Deliveries, newest first"</caption>
                        <thead><tr>
                            <th scope="col">"Event"</th><th scope="col">"State"</th><th scope="col">"Attempts"</th>
                            <th scope="col">"Last status"</th><th scope="col">"Last error"</th>
                        </tr></thead>
                        <tbody>
                            {l.deliveries.into_iter().map(|d| view! {
                                <tr>
                                    <td><code>{d.event.as_str()}</code></td>
                                    <td>{d.state.as_str()}</td>
                                    <td>{d.attempts}</td>
                                    <td>{d.last_status.map(|s| s.to_string()).unwrap_or_default()}</td>
                                    <td>{d.last_error.unwrap_or_default()}</td>
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                }
                .into_any(),
            })}
        </li>
    }
}
