//! UI building blocks. Components render and forward events; the rules
//! they show come from [`domain::policy`] and [`domain::route::machine`],
//! their wording from [`domain::words`].

pub mod candidate_row;
pub mod draft;
pub mod field;
pub mod live;
pub mod policy_editor;
pub mod route_list;
pub mod route_panel;
pub mod seed;

/// The islands' props read in the browser as serde reads them on the server
/// (`domain::wire_json::agree`).
#[cfg(test)]
mod island_props {
    use super::route_list::RouteFilter;
    use super::route_panel::RoutePageData;
    use domain::wire_json::agree::{agree, attempt, circuits, profile, snapshot};
    use serde_json::json;

    #[test]
    fn island_props() {
        agree::<RouteFilter>(
            json!({"profile_id": "p_1", "caller_ref": "card-7", "active_only": true}),
        );
        agree::<RouteFilter>(json!({"profile_id": null, "caller_ref": null, "active_only": false}));
        agree::<Vec<(String, String)>>(json!([["p_1", "Main"], ["p_2", "Other"]]));
        agree::<RoutePageData>(json!({
            "route": snapshot(),
            "attempts": [attempt()],
            "profile": profile(),
            "circuits": circuits()["circuits"].clone(),
        }));
    }
}
