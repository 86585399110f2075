//! `/profiles`: every dynamic profile, and the way to create one.

use crate::api;
use crate::PageTitle;
use domain::profile::Profile;
use leptos::prelude::*;

#[component]
pub fn ProfilesPage() -> impl IntoView {
    let profiles = Resource::new(|| (), |_| api::list_profiles());
    let viewer = crate::use_viewer();
    view! {
        <PageTitle text="Profiles · Provider Error Recovery"/>
        <div class="page-head">
            <h1>"Dynamic profiles"</h1>
            <Suspense>
                {move || Suspend::new(async move {
                    viewer.await.is_ok_and(|v| v.may(domain::access::Permission::ProfilesManage)).then(|| view! {
                        <a class="button primary" href="/profiles/new">"New profile"</a>
                    })
                })}
            </Suspense>
        </div>
        <p class="explain">
            "A dynamic profile is an ordered list of agent candidates. Each candidate says what happens \
             after a transient error (a provider overloaded, a dropped connection, a short rate limit) \
             and after a hard error (a usage limit, an expired login, a missing key)."
        </p>
        <Suspense fallback=|| view! { <p class="notice">"Loading profiles…"</p> }>
            {move || Suspend::new(async move {
                match profiles.await {
                    Ok(list) if list.is_empty() => view! {
                        <p class="notice">"No profiles yet. Create one to choose how each candidate recovers."</p>
                    }.into_any(),
                    Ok(list) => view! {
                        <ul class="profile-list">
                            {list.into_iter().map(|p| view! { <ProfileCard profile=p/> }).collect_view()}
                        </ul>
                    }.into_any(),
                    Err(e) => view! { <p class="notice problem" role="alert">{e.message}</p> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn ProfileCard(profile: Profile) -> impl IntoView {
    let href = format!("/profiles/{}", profile.id);
    let chain = profile
        .candidates
        .iter()
        .map(|c| c.label.clone())
        .collect::<Vec<_>>()
        .join(" → ");
    let count = profile.candidates.len();
    view! {
        <li class="profile-card">
            <a href=href>
                <strong>{profile.name}</strong>
                <span class="muted">
                    {format!("{count} candidate{}", if count == 1 { "" } else { "s" })}
                    {format!(" · revision {}", profile.revision)}
                </span>
                <span class="chain">{chain}</span>
            </a>
            {profile.configuration_error.map(|_| view! { <span class="badge error">"Needs repair"</span> })}
        </li>
    }
}
