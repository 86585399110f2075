//! A live list of routes, each linking to its panel: the `/routes` page and
//! the "active routes" section of a profile's settings page. Starts from the
//! server-rendered list and follows the event stream; after every
//! (re)connection it re-reads the list so nothing is missed. An island: its
//! props are the list as rendered, sent to the browser with the page.

use super::live::{use_route_events, LiveIndicator};
use super::seed::Seed;
use crate::api;
use domain::route::RouteSnapshot;
use domain::words::{
    caller_words, fallback_words, is_newer, pending_words, safe_cause, state_words,
};
use leptos::either::Either;
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// Which routes a list shows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RouteFilter {
    pub profile_id: Option<String>,
    /// Only the routes whose caller reference is exactly this (a search).
    pub caller_ref: Option<String>,
    /// Leave out completed and cancelled routes.
    pub active_only: bool,
}

/// The browser's reader (`domain::wire_json`), field for field as serde's.
#[cfg(any(test, feature = "hydrate"))]
impl domain::wire_json::FromJson for RouteFilter {
    fn from_json(v: &serde_json::Value) -> Result<Self, domain::wire_json::Error> {
        let o = domain::wire_json::Fields::of(v)?;
        Ok(RouteFilter {
            profile_id: o.get("profile_id")?,
            caller_ref: o.get("caller_ref")?,
            active_only: o.get("active_only")?,
        })
    }
}

impl RouteFilter {
    fn admits(&self, r: &RouteSnapshot) -> bool {
        self.profile_id
            .as_ref()
            .is_none_or(|p| r.profile_id == *p.as_str())
            && self
                .caller_ref
                .as_ref()
                .is_none_or(|c| r.caller.reference == *c)
            && !(self.active_only && r.state.is_terminal())
    }
}

/// Puts `next` in the list unless a newer snapshot of it is there; most
/// recently updated first. The list is always in that order, so `next`
/// goes in before the first route updated earlier (no sort of whole
/// snapshots: a smaller bundle).
fn upsert(list: &mut Vec<RouteSnapshot>, next: RouteSnapshot, filter: &RouteFilter) {
    if let Some(i) = list.iter().position(|r| r.id == next.id) {
        if !is_newer(&next, &list[i]) {
            return;
        }
        list.remove(i);
    }
    if filter.admits(&next) {
        let at = list
            .iter()
            .position(|r| r.updated_at < next.updated_at)
            .unwrap_or(list.len());
        list.insert(at, next);
    }
}

#[island]
pub fn RouteList(
    #[prop(into)] initial: Seed<Vec<RouteSnapshot>>,
    #[prop(into)] filter: Seed<RouteFilter>,
    /// Shown when no route matches.
    #[prop(into)]
    empty: String,
    /// Profile names by id (the full list names each route's profile).
    /// Pairs, not a map: a handful of profiles are searched in place, and
    /// the bundle does without a hash map of strings.
    #[prop(into)]
    profile_names: Seed<Vec<(String, String)>>,
    /// For profiles that prefer the first eligible candidate: profile id →
    /// that candidate's label, so a card says it is on a fallback
    /// ([`domain::words::returns_to`]).
    #[prop(into)]
    returns_to: Seed<Vec<(String, String)>>,
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
            let Some(f) = filter.try_get_value() else {
                return;
            };
            leptos::task::spawn_local(async move {
                if let Ok(list) = api::list_routes(f.profile_id, f.caller_ref).await {
                    merge(list);
                }
            });
        },
    );
    let names = StoredValue::new(profile_names.into_inner());
    let returns = StoredValue::new(returns_to.into_inner());
    // Not `<Show>`: its children and fallback are type-erased views, and
    // each brings its own async hydration path into the bundle.
    let any = Memo::new(move |_| routes.with(|r| !r.is_empty()));

    view! {
        <div class="route-list">
            <LiveIndicator connection announce/>
            {move || if any.get() {
                Either::Left(view! {
                <ul class="route-cards">
                    {move || routes.get().into_iter().map(|route| view! {
                        <RouteCard
                            profile=names.with_value(|n| profile_name(n, route.profile_id.as_str()))
                            returns_to=returns.with_value(|n| profile_name(n, route.profile_id.as_str()))
                            route
                        />
                    }).collect_view()}
                </ul>
                })
            } else {
                Either::Right(view! { <p class="notice">{empty.clone()}</p> })
            }}
        </div>
    }
}

/// What the pairs say about the profile with `id`, if they name it.
fn profile_name(names: &[(String, String)], id: &str) -> Option<String> {
    names
        .iter()
        .find(|(profile, _)| profile == id)
        .map(|(_, name)| name.clone())
}

#[component]
fn RouteCard(
    route: RouteSnapshot,
    profile: Option<String>,
    returns_to: Option<String>,
) -> impl IntoView {
    let fallback = fallback_words(&route, returns_to.as_deref());
    let on_fallback = fallback.is_some().to_string();
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
        <li class="route-card" data-state=route.state.as_str() data-fallback=on_fallback>
            <a href=href>
                <span class="route-card-head">
                    <strong class="route-card-title">{title}</strong>
                    <span class="state-badge" data-state=route.state.as_str()>{state_words(route.state)}</span>
                </span>
                <span class="muted">{details.join(" · ")}</span>
                {fallback.map(|f| view! { <span class="route-card-fallback">{f}</span> })}
                {profile.map(|p| view! { <span class="muted route-card-profile">{format!("Profile: {p}")}</span> })}
                <span class="route-id">{route.id.to_string()}</span>
            </a>
        </li>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, Utc};
    use domain::ids::Generation;
    use domain::route::{Caller, CallerKind, CandidateRef, RouteState};

    fn route(id: &str, generation: i64, updated_at: &str, state: RouteState) -> RouteSnapshot {
        let at: DateTime<Utc> = DateTime::parse_from_rfc3339(updated_at).unwrap().to_utc();
        RouteSnapshot {
            id: id.into(),
            profile_id: "p".into(),
            caller: Caller {
                kind: CallerKind::Kanban,
                reference: "task-1".into(),
            },
            state,
            generation: Generation(generation),
            cycle: 1,
            candidate: CandidateRef {
                index: 0,
                id: "a".into(),
                label: "Claude".into(),
            },
            invocation_id: "inv".into(),
            prompt_generation: 1,
            pending: None,
            last_failure: None,
            reason: None,
            excluded: vec![],
            updated_at: at,
            server_time: at,
        }
    }

    fn ids(list: &[RouteSnapshot]) -> Vec<&str> {
        list.iter().map(|r| r.id.as_str()).collect()
    }

    #[test]
    fn upsert_keeps_the_newest_first() {
        let all = RouteFilter::default();
        let mut list = Vec::new();
        for (id, at) in [
            ("a", "2026-11-30T12:00:02Z"),
            ("b", "2026-11-30T12:00:03Z"),
            ("c", "2026-11-30T12:00:01Z"),
            ("d", "2026-11-30T12:00:02Z"),
        ] {
            upsert(&mut list, route(id, 1, at, RouteState::Active), &all);
        }
        // Equal times keep the order they came in.
        assert_eq!(ids(&list), ["b", "a", "d", "c"]);

        // A newer snapshot moves to its place; an older one is ignored.
        upsert(
            &mut list,
            route("c", 2, "2026-11-30T12:00:04Z", RouteState::Active),
            &all,
        );
        assert_eq!(ids(&list), ["c", "b", "a", "d"]);
        upsert(
            &mut list,
            route("b", 0, "2026-11-30T12:00:09Z", RouteState::Active),
            &all,
        );
        assert_eq!(ids(&list), ["c", "b", "a", "d"]);
        assert_eq!(list[1].generation, Generation(1));
    }

    #[test]
    fn upsert_drops_what_the_filter_no_longer_admits() {
        let active = RouteFilter {
            profile_id: None,
            caller_ref: None,
            active_only: true,
        };
        let mut list = Vec::new();
        upsert(
            &mut list,
            route("a", 1, "2026-11-30T12:00:01Z", RouteState::Active),
            &active,
        );
        upsert(
            &mut list,
            route("b", 1, "2026-11-30T12:00:02Z", RouteState::Completed),
            &active,
        );
        assert_eq!(ids(&list), ["a"]);
        upsert(
            &mut list,
            route("a", 1, "2026-11-30T12:00:03Z", RouteState::Cancelled),
            &active,
        );
        assert!(list.is_empty());
    }
}
