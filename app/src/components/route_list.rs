//! A live list of routes, each linking to its panel: the `/routes` page and
//! the "active routes" section of a profile's settings page. Starts from the
//! server-rendered list and follows the event stream; after every
//! (re)connection it re-reads the list so nothing is missed. An island: its
//! props are the list as rendered, sent to the browser with the page.

use super::live::{use_route_events, LiveIndicator};
use super::seed::Seed;
use crate::api;
use crate::route::{RouteSnapshot, RouteState};
use crate::words::{caller_words, is_newer, pending_words, safe_cause, state_words};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Which routes a list shows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RouteFilter {
    pub profile_id: Option<String>,
    /// Leave out completed and cancelled routes.
    pub active_only: bool,
}

impl RouteFilter {
    fn admits(&self, r: &RouteSnapshot) -> bool {
        self.profile_id
            .as_ref()
            .is_none_or(|p| r.profile_id == *p.as_str())
            && !(self.active_only
                && matches!(r.state, RouteState::Completed | RouteState::Cancelled))
    }
}

/// Puts `next` in the list unless a newer snapshot of it is there; most
/// recently updated first.
fn upsert(list: &mut Vec<RouteSnapshot>, next: RouteSnapshot, filter: &RouteFilter) {
    match list.iter().position(|r| r.id == next.id) {
        Some(i) if !is_newer(&next, &list[i]) => return,
        Some(i) if filter.admits(&next) => list[i] = next,
        Some(i) => {
            list.remove(i);
        }
        None if filter.admits(&next) => list.push(next),
        None => return,
    }
    list.sort_by_key(|r| std::cmp::Reverse(r.updated_at));
}

#[island]
pub fn RouteList(
    #[prop(into)] initial: Seed<Vec<RouteSnapshot>>,
    #[prop(into)] filter: Seed<RouteFilter>,
    /// Shown when no route matches.
    #[prop(into)]
    empty: String,
    /// Profile names by id (the full list names each route's profile).
    #[prop(into)]
    profile_names: Seed<HashMap<String, String>>,
    /// Make the connection indicator a status region.
    announce: bool,
) -> impl IntoView {
    let filter = StoredValue::new(filter.into_inner());
    let routes = RwSignal::new({
        let mut list = Vec::new();
        for r in initial.into_inner() {
            upsert(&mut list, r, &filter.get_value());
        }
        list
    });
    let merge = move |fresh: Vec<RouteSnapshot>| {
        let Some(filter) = filter.try_get_value() else {
            return;
        };
        routes.try_update(|list| {
            for r in fresh {
                upsert(list, r, &filter);
            }
        });
    };
    let connection = use_route_events(
        None,
        move |event| merge(vec![event.route]),
        move || {
            let Some(profile_id) = filter.try_get_value().map(|f| f.profile_id) else {
                return;
            };
            leptos::task::spawn_local(async move {
                if let Ok(list) = api::list_routes(profile_id).await {
                    merge(list);
                }
            });
        },
    );
    let names = StoredValue::new(profile_names.into_inner());

    view! {
        <div class="route-list">
            <LiveIndicator connection announce/>
            <Show
                when=move || routes.with(|r| !r.is_empty())
                fallback=move || view! { <p class="notice">{empty.clone()}</p> }
            >
                <ul class="route-cards">
                    <For
                        each=move || routes.get()
                        key=|r| (r.id.clone(), r.generation, r.updated_at)
                        let:route
                    >
                        <RouteCard profile=names.with_value(|n| n.get(route.profile_id.as_str()).cloned()) route/>
                    </For>
                </ul>
            </Show>
        </div>
    }
}

#[component]
fn RouteCard(route: RouteSnapshot, profile: Option<String>) -> impl IntoView {
    let href = format!("/routes/{}", route.id);
    let title = match route.caller.reference.trim() {
        "" => caller_words(route.caller.kind).to_string(),
        r => format!("{} · {r}", caller_words(route.caller.kind)),
    };
    let mut details = vec![route.candidate.label.clone()];
    if let Some(f) = &route.last_failure {
        details.push(safe_cause(&f.code));
    }
    if let Some(p) = pending_words(&route) {
        details.push(p);
    }
    view! {
        <li class="route-card" data-state=route.state.as_str()>
            <a href=href>
                <span class="route-card-head">
                    <strong class="route-card-title">{title}</strong>
                    <span class="state-badge" data-state=route.state.as_str()>{state_words(route.state)}</span>
                </span>
                <span class="muted">{details.join(" · ")}</span>
                {profile.map(|p| view! { <span class="muted route-card-profile">{format!("Profile: {p}")}</span> })}
                <span class="route-id">{route.id.to_string()}</span>
            </a>
        </li>
    }
}
