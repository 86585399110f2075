//! `/admin/people`: everyone who signs in, for administrators — disable,
//! enable, remove, and change what each may do. The same as `kandev-recovery
//! user …`; disabling or removing someone ends their sessions at once.

use crate::api;
use crate::components::seed::Seed;
use crate::PageTitle;
use domain::access::Permission;
use domain::error::ApiError;
use domain::people::Person;
use leptos::prelude::*;

#[component]
pub fn PeoplePage() -> impl IntoView {
    let viewer = crate::use_viewer();
    let data = Resource::new(|| (), |_| api::list_people());
    view! {
        <PageTitle text="People · Provider Error Recovery"/>
        <h1>"People"</h1>
        <p class="explain">
            "Who signs in, and what each may do. Disabling or removing someone ends their sessions \
             at once; new sign-in links come from "<code>"kandev-recovery user add"</code>" and "
            <code>"user link"</code>"."
        </p>
        <Suspense fallback=|| view! { <p class="notice">"Loading people…"</p> }>
            {move || Suspend::new(async move {
                let admin = viewer.await.is_ok_and(|v| v.may(domain::access::Permission::Admin));
                if !admin {
                    return view! {
                        <p class="notice problem" role="alert">"Managing people needs the admin permission."</p>
                    }
                    .into_any();
                }
                match data.await {
                    Ok(people) => view! {
                        <ul class="people">
                            {people.into_iter().map(|p| view! { <li><PersonCard person=p/></li> }).collect_view()}
                        </ul>
                    }
                    .into_any(),
                    Err(ApiError { message, .. }) => {
                        view! { <p class="notice problem" role="alert">{message}</p> }.into_any()
                    }
                }
            })}
        </Suspense>
    }
}

/// One person with their controls (an island: the buttons run in the
/// browser; the person travels as its props).
#[island]
fn PersonCard(#[prop(into)] person: Seed<Person>) -> impl IntoView {
    let person = person.into_inner();
    let id = StoredValue::new(person.id.clone());
    let disabled = person.disabled;
    let held = RwSignal::new(person.permissions.clone());
    let status = RwSignal::new(String::new());
    let busy = RwSignal::new(false);
    // After a change the page is read again: the server's list is the truth.
    let done = move |r: Result<(), ApiError>| match r {
        Ok(()) => {
            let _ = window().location().reload();
        }
        Err(e) => {
            busy.set(false);
            status.set(e.message);
        }
    };
    let toggle = move |_| {
        busy.set(true);
        let action = if disabled { "enable" } else { "disable" };
        leptos::task::spawn_local(async move {
            done(
                api::person_action(&id.get_value(), action)
                    .await
                    .map(|_| ()),
            );
        });
    };
    let remove = move |_| {
        busy.set(true);
        leptos::task::spawn_local(async move {
            done(api::remove_person(&id.get_value()).await);
        });
    };
    let save = move |_| {
        busy.set(true);
        let list = held.get_untracked();
        leptos::task::spawn_local(async move {
            done(
                api::set_person_permissions(&id.get_value(), list)
                    .await
                    .map(|_| ()),
            );
        });
    };
    let sessions = match person.sessions {
        1 => "1 session".to_string(),
        n => format!("{n} sessions"),
    };
    view! {
        <section class="panel person" aria-label=person.name.clone()>
            <h2>{person.name.clone()}</h2>
            <p class="muted">
                {if disabled { "Disabled" } else { "Enabled" }}" · "{sessions}
            </p>
            <fieldset>
                <legend>"Permissions"</legend>
                {Permission::ALL.iter().map(|&permission| {
                    let name = permission.as_str();
                    let checked = move || held.with(|h| h.contains(&permission));
                    let flip = move |_| held.update(|h| {
                        if let Some(i) = h.iter().position(|&p| p == permission) {
                            h.remove(i);
                        } else {
                            h.push(permission);
                        }
                    });
                    view! {
                        <label class="check">
                            <input type="checkbox" prop:checked=checked on:change=flip/>
                            {name}
                        </label>
                    }
                }).collect_view()}
            </fieldset>
            <div class="actions">
                <button type="button" prop:disabled=move || busy.get() on:click=save>"Save permissions"</button>
                <button type="button" class="secondary" prop:disabled=move || busy.get() on:click=toggle>
                    {if disabled { "Enable" } else { "Disable" }}
                </button>
                <button type="button" class="danger" prop:disabled=move || busy.get() on:click=remove>"Remove"</button>
            </div>
            <p role="status">{move || status.get()}</p>
        </section>
    }
}
