//! `/profiles/{id}` and `/profiles/new`: the profile settings page.

use crate::api;
use crate::components::candidate_row::CandidateRow;
use crate::components::draft::{CandidateDraft, ProfileDraft};
use crate::components::field::{Errors, FieldMessage};
use crate::components::route_list::{RouteFilter, RouteList};
use crate::components::seed::Seed;
use crate::PageTitle;
use domain::error::{ApiError, ErrorCode};
use domain::policy::{FieldError, FieldErrorCode};
use domain::profile::{check_profile, Intent, Prefer, Profile};
use domain::words::returns_to;
use leptos::either::Either;
use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

#[derive(Debug, Clone, PartialEq)]
enum Status {
    Idle,
    Saving,
    Saved(String),
    Problem(String),
    /// Someone else saved first: their version, to load on request.
    Stale(Box<Profile>),
}

#[component]
pub fn ProfilePage() -> impl IntoView {
    let params = use_params_map();
    let id = move || params.with(|p| p.get("id").unwrap_or_default());
    let profile = Resource::new(id, api::get_profile);
    let routes = Resource::new(id, |id| api::list_routes(Some(id), None));
    let viewer = crate::use_viewer();
    view! {
        <Suspense fallback=|| view! { <p class="notice">"Loading the profile…"</p> }>
            {move || Suspend::new(async move {
                let editable = viewer.await.is_ok_and(|v| v.may(domain::access::Permission::ProfilesManage));
                match profile.await {
                    Ok(p) => view! { <ProfileSettings initial=Some(p) editable/> }.into_any(),
                    Err(e) => view! { <LoadError error=e/> }.into_any(),
                }
            })}
        </Suspense>
        <p class="profile-history"><a href=move || format!("/profiles/{}/revisions", id())>"Revisions: what changed, and who saved it"</a></p>
        <Suspense>
            {move || Suspend::new(async move {
                let profile_id = id();
                // Only under a profile that exists.
                let Ok(p) = profile.await else { return None };
                let returns: Vec<(String, String)> = returns_to(&p)
                    .map(|first| vec![(profile_id.clone(), first.to_string())])
                    .unwrap_or_default();
                routes
                    .await
                    .ok()
                    .map(|list| view! { <ProfileRoutes profile_id initial=list returns/> })
            })}
        </Suspense>
    }
}

/// The active routes using this profile, live, each linking to its panel.
#[component]
fn ProfileRoutes(
    profile_id: String,
    initial: Vec<domain::route::RouteSnapshot>,
    returns: Vec<(String, String)>,
) -> impl IntoView {
    let filter = RouteFilter {
        profile_id: Some(profile_id),
        caller_ref: None,
        active_only: true,
    };
    view! {
        <section class="profile-routes" aria-labelledby="profile-routes-heading">
            <h2 id="profile-routes-heading">"Active routes using this profile"</h2>
            <p class="explain">"Edits apply to each route's next failure; a pending wait keeps the policy it was scheduled under."</p>
            <RouteList
                initial
                filter
                profile_names=Vec::new()
                returns_to=returns
                announce=false
                empty="No active route uses this profile."
            />
        </section>
    }
}

#[component]
pub fn NewProfilePage() -> impl IntoView {
    let viewer = crate::use_viewer();
    view! {
        <Suspense fallback=|| view! { <p class="notice">"Loading…"</p> }>
            {move || Suspend::new(async move {
                if viewer.await.is_ok_and(|v| v.may(domain::access::Permission::ProfilesManage)) {
                    view! { <ProfileSettings initial=None editable=true/> }.into_any()
                } else {
                    view! { <ReadOnlyNotice/> }.into_any()
                }
            })}
        </Suspense>
    }
}

/// Shown instead of edit controls to a viewer without `profiles:manage`.
#[component]
fn ReadOnlyNotice() -> impl IntoView {
    view! {
        <p class="notice read-only" role="note">
            "You can view profiles; changing them needs the profiles:manage permission."
        </p>
    }
}

#[component]
pub fn LoadError(error: ApiError) -> impl IntoView {
    let title = if error.status == 404 || error.error == ErrorCode::NotFound {
        "Profile not found"
    } else {
        "The profile could not be loaded"
    };
    view! {
        <PageTitle text=title/>
        <section class="panel">
            <h1>{title}</h1>
            <p>{error.message}</p>
            <p><a href="/profiles">"Back to all profiles"</a></p>
        </section>
    }
}

/// The page's title as the server renders it, and the editor.
#[component]
fn ProfileSettings(initial: Option<Profile>, editable: bool) -> impl IntoView {
    let name = initial.as_ref().map(|p| p.name.clone()).unwrap_or_default();
    let title = page_title(&heading_of(&name, initial.is_none()));
    view! {
        <PageTitle text=title/>
        <ProfileEditor initial editable/>
    }
}

/// The editor's heading: the profile's name, or what it is while unnamed.
fn heading_of(name: &str, creating: bool) -> String {
    match name.trim() {
        "" if creating => "New dynamic profile".to_string(),
        "" => "Untitled profile".to_string(),
        _ => name.to_string(),
    }
}

fn page_title(heading: &str) -> String {
    format!("{heading} · Provider Error Recovery")
}

/// The settings form: an island, so everything that takes input runs in
/// the browser; the profile it starts from travels as its props.
#[island]
fn ProfileEditor(#[prop(into)] initial: Seed<Option<Profile>>, editable: bool) -> impl IntoView {
    let initial = initial.into_inner();
    let creating = initial.is_none();
    let profile_id = initial.as_ref().map(|p| p.id.clone()).unwrap_or_default();
    let configuration_error = initial.as_ref().and_then(|p| p.configuration_error.clone());
    let draft = match &initial {
        Some(p) => ProfileDraft::from_profile(p),
        None => ProfileDraft::blank(),
    };
    let intent = if creating {
        Intent::Create
    } else {
        Intent::Update
    };
    let attempted = RwSignal::new(false);
    let status = RwSignal::new(Status::Idle);
    let server_errors = RwSignal::new(Vec::<FieldError>::new());
    // Empty required fields are only reported once a save is attempted;
    // everything else is reported as it is typed.
    let inline = Memo::new(move |_| {
        let all = check_profile(&draft.to_json(), intent);
        if attempted.get() {
            all
        } else {
            all.into_iter()
                .filter(|e| e.code != FieldErrorCode::Required)
                .collect()
        }
    });
    let errors = Errors {
        inline,
        server: server_errors,
    };
    // Any edit makes the server's last verdict stale.
    Effect::watch(
        move || draft.to_json(),
        move |_, _, _| server_errors.set(Vec::new()),
        false,
    );

    let save_id = profile_id.clone();
    let save = move || {
        attempted.set(true);
        let problems = check_profile(&draft.to_json(), intent);
        if !problems.is_empty() {
            status.set(Status::Problem(format!(
                "{} field{} need{} attention before saving.",
                problems.len(),
                if problems.len() == 1 { "" } else { "s" },
                if problems.len() == 1 { "s" } else { "" }
            )));
            return;
        }
        status.set(Status::Saving);
        let body = draft.to_json();
        let id = save_id.clone();
        leptos::task::spawn_local(async move {
            let result = if creating {
                api::create_profile(body).await
            } else {
                api::update_profile(id.as_str(), body).await
            };
            match result {
                Ok(saved) if creating => {
                    let _ = window()
                        .location()
                        .set_href(&format!("/profiles/{}", saved.id));
                }
                Ok(saved) => {
                    keep_open_rows(&draft, &saved);
                    status.set(Status::Saved(format!(
                        "Saved (revision {}).",
                        saved.revision
                    )));
                }
                Err(e) if e.error == ErrorCode::ValidationFailed => {
                    server_errors.set(e.errors.clone());
                    status.set(Status::Problem(format!(
                        "{} The server's messages are shown at the fields.",
                        e.message
                    )));
                }
                Err(ApiError {
                    profile: Some(current),
                    ..
                }) => status.set(Status::Stale(current)),
                Err(e) => status.set(Status::Problem(e.message)),
            }
        });
    };

    let add_candidate = move |_| {
        draft
            .candidates
            .update(|list| list.push(CandidateDraft::blank()))
    };
    let heading = move || draft.name.with(|n| heading_of(n, creating));
    // The title follows the name as it is typed (the server rendered the
    // first one, outside this island).
    Effect::watch(
        heading,
        |h, _, _| document().set_title(&page_title(h)),
        false,
    );
    let name_field = Signal::derive(|| "name".to_string());
    let candidates_field = Signal::derive(|| "candidates".to_string());

    view! {
        <nav class="crumbs" aria-label="Breadcrumb"><a href="/profiles">"Profiles"</a></nav>
        <h1>{heading}</h1>
        {configuration_error.map(|e| view! {
            <section class="panel warning" role="alert">
                <h2>"This profile needs repair"</h2>
                <p>{e.message}</p>
                <ul>{e.errors.into_iter().map(|fe| view! { <li><code>{fe.field}</code>": "{fe.message}</li> }).collect_view()}</ul>
                <p>"Until it is saved in the current format it authorises no automatic recovery."</p>
            </section>
        })}
        {(!editable).then(|| view! { <ReadOnlyNotice/> })}
        <form
            class="profile-form"
            novalidate
            on:submit=move |ev| {
                ev.prevent_default();
                if editable {
                    save();
                }
            }
        >
            // A viewer who may not edit sees the settings without controls
            // (the server refuses their writes anyway).
            <fieldset class="plain" disabled=!editable>
            <div class="field">
                <label for="profile-name">"Profile name"</label>
                <input
                    id="profile-name"
                    type="text"
                    autocomplete="off"
                    bind:value=draft.name
                    aria-invalid=move || errors.message("name").is_some().to_string()
                    aria-describedby="profile-name-error"
                />
                <FieldMessage id="profile-name-error".to_string() errors field=name_field/>
            </div>

            <h2>"Candidates"</h2>
            <p class="explain">
                "Candidates are tried in order. When one fails, its policy for that class of error decides: \
                 retry it, wait for the provider's reset, skip to the next candidate, or stop for you."
            </p>
            <FieldMessage id="candidates-error".to_string() errors field=candidates_field/>
            <ol class="candidates">
                <For each=move || draft.candidates.get() key=|c| c.key let:candidate>
                    <CandidateRow draft candidate errors/>
                </For>
            </ol>
            <PreferChoice prefer=draft.prefer/>
            </fieldset>
            {editable.then(|| view! {
                <button type="button" class="secondary add" on:click=add_candidate>
                    "Add candidate"
                </button>

                <div class="save-bar">
                    <button type="submit" class="primary" prop:disabled=move || status.get() == Status::Saving>
                        {if creating { "Create profile" } else { "Save" }}
                    </button>
                    <StatusLine status draft/>
                </div>
            })}
        </form>
    }
}

/// Where a route goes after a success once it fell back: the profile's
/// `prefer`, with the sentence that explains it.
#[component]
fn PreferChoice(prefer: RwSignal<Prefer>) -> impl IntoView {
    let choice = move |value: Prefer, text: &'static str| {
        view! {
            <label class="choice">
                <input
                    type="radio"
                    name="prefer"
                    value=value.as_str()
                    prop:checked=move || prefer.get() == value
                    on:change=move |_| prefer.set(value)
                />
                <span>{text}</span>
            </label>
        }
    };
    view! {
        <fieldset class="outcome prefer" aria-describedby="prefer-hint">
            <legend>"After a fallback"</legend>
            {choice(Prefer::FirstEligible, "Return to the first eligible candidate")}
            {choice(Prefer::Stay, "Stay on the candidate that worked")}
            <p class="hint" id="prefer-hint">
                "After a success, a route that fell back goes to the highest candidate in this order \
                 that is available again at its next prompt, never in the middle of one; “Stay” \
                 keeps it on the candidate that worked until that one fails."
            </p>
        </fieldset>
    }
}

/// After a save, reloads the form from the answer (new candidates get their
/// ids) while keeping open rows open.
fn keep_open_rows(draft: &ProfileDraft, saved: &Profile) {
    let open: Vec<bool> = draft
        .candidates
        .with_untracked(|list| list.iter().map(|c| c.expanded.get_untracked()).collect());
    draft.reset_to(saved);
    draft.candidates.with_untracked(|list| {
        for (c, was_open) in list.iter().zip(open) {
            c.expanded.set(was_open);
        }
    });
}

#[component]
fn StatusLine(status: RwSignal<Status>, draft: ProfileDraft) -> impl IntoView {
    // One view for every status but the stale one (see `Notice::line` in
    // the route panel: no type-erased views in islands).
    move || match status.get() {
        Status::Stale(current) => {
            let revision = current.revision;
            Either::Right(view! {
                <div class="status problem" role="status">
                    <p>
                        {format!(
                            "Someone else saved this profile (now revision {revision}) after you opened it; nothing was saved."
                        )}
                    </p>
                    <button
                        type="button"
                        class="secondary"
                        on:click=move |_| {
                            draft.reset_to(&current);
                            status.set(Status::Idle);
                        }
                    >
                        "Load the current version"
                    </button>
                </div>
            })
        }
        other => {
            let (class, text) = match other {
                Status::Saving => ("status", "Saving…".to_string()),
                Status::Saved(m) => ("status ok", m),
                Status::Problem(m) => ("status problem", m),
                Status::Idle | Status::Stale(_) => ("status", String::new()),
            };
            Either::Left(view! { <p class=class role="status">{text}</p> })
        }
    }
}
