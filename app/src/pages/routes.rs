//! `/routes`: every recovery route, live; `/routes/{id}`: one route's panel.

use crate::api;
use crate::components::route_list::{RouteFilter, RouteList};
use crate::components::route_panel::{RoutePageData, RoutePanel};
use crate::PageTitle;
use domain::error::{ApiError, ErrorCode};
use domain::route::RouteSnapshot;
use domain::words::{returns_to, route_title};
use leptos::prelude::*;
use leptos_router::hooks::{use_params_map, use_query_map};

/// Profile id → something about it, for the route cards.
type ByProfile = Vec<(String, String)>;

/// The list page's data: routes (only those whose caller reference is
/// `caller_ref`, when searching), the names of their profiles, and the
/// candidate each profile that prefers the first eligible returns to.
async fn load_list(
    caller_ref: Option<String>,
) -> Result<(Vec<RouteSnapshot>, ByProfile, ByProfile), ApiError> {
    let routes = api::list_routes(None, caller_ref).await?;
    let profiles = api::list_profiles().await.unwrap_or_default();
    let returns = profiles
        .iter()
        .filter_map(|p| Some((p.id.to_string(), returns_to(p)?.to_string())))
        .collect();
    let names = profiles
        .into_iter()
        .map(|p| (p.id.to_string(), p.name))
        .collect();
    Ok((routes, names, returns))
}

#[component]
pub fn RoutesPage() -> impl IntoView {
    // `?ref=` searches by the caller's own reference (a card, a run), exactly.
    let query = use_query_map();
    let caller_ref = move || {
        query.with(|q| {
            q.get("ref")
                .map(|r| r.trim().to_string())
                .filter(|r| !r.is_empty())
        })
    };
    let data = Resource::new(caller_ref, load_list);
    view! {
        <PageTitle text="Routes · Provider Error Recovery"/>
        <h1>"Routes"</h1>
        <p class="explain">
            "Each route is one agent session recovering from provider errors: which candidate it is on, \
             why it stopped and what happens next. The list updates live."
        </p>
        <form class="route-search" method="get" action="/routes" role="search">
            <label for="route-search-ref">"Caller reference"</label>
            <input id="route-search-ref" name="ref" type="search" maxlength="255"
                placeholder="a card, a workflow run…" prop:value=move || caller_ref().unwrap_or_default()/>
            <button type="submit">"Find"</button>
            {move || caller_ref().map(|_| view! { <a href="/routes">"Show every route"</a> })}
        </form>
        <Suspense fallback=|| view! { <p class="notice">"Loading routes…"</p> }>
            {move || Suspend::new(async move {
                let searched = caller_ref();
                match data.await {
                    Ok((routes, names, returns)) => {
                        let empty = match &searched {
                            Some(r) => format!("No route has the caller reference “{r}”."),
                            None => "No routes yet. Routes appear here when a caller opens one through the API.".to_string(),
                        };
                        view! {
                        <RouteList
                            initial=routes
                            filter=RouteFilter { caller_ref: searched, ..RouteFilter::default() }
                            profile_names=names
                            returns_to=returns
                            announce=true
                            empty
                        />
                    }.into_any()
                    }
                    Err(e) => view! { <p class="notice problem" role="alert">{e.message}</p> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
pub fn RoutePage() -> impl IntoView {
    let params = use_params_map();
    let id = move || params.with(|p| p.get("id").unwrap_or_default());
    let data = Resource::new(id, RoutePageData::load);
    let viewer = crate::use_viewer();
    view! {
        <nav class="crumbs" aria-label="Breadcrumb"><a href="/routes">"Routes"</a></nav>
        <Suspense fallback=|| view! { <p class="notice">"Loading the route…"</p> }>
            {move || Suspend::new(async move {
                // Manual actions are offered only to who may take them.
                let can_act = viewer.await.is_ok_and(|v| v.may(domain::access::Permission::RoutesAct));
                match data.await {
                    Ok(d) => {
                        let title = route_title(&d.route);
                        let id = d.route.id.clone();
                        let profile = d.profile.as_ref().map(|p| (p.id.clone(), p.name.clone()));
                        view! {
                            <PageTitle text=format!("{title} · Provider Error Recovery")/>
                            <h1>{title}</h1>
                            <p class="route-meta muted">
                                <span class="route-meta-item">"Route "<code class="route-id">{id.to_string()}</code></span>
                                {profile.map(|(pid, name)| view! {
                                    <span class="route-meta-item">"Profile "<a href=format!("/profiles/{pid}")>{name}</a></span>
                                })}
                            </p>
                            <RoutePanel data=d can_act/>
                        }
                        .into_any()
                    }
                    Err(e) => view! { <RouteLoadError error=e/> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn RouteLoadError(error: ApiError) -> impl IntoView {
    let title = if error.status == 404 || error.error == ErrorCode::NotFound {
        "Route not found"
    } else {
        "The route could not be loaded"
    };
    view! {
        <PageTitle text=title/>
        <section class="panel">
            <h1>{title}</h1>
            <p>{error.message}</p>
            <p><a href="/routes">"Back to all routes"</a></p>
        </section>
    }
}
