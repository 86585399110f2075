//! UI building blocks. Components render and forward events; the rules
//! they show come from [`crate::policy`] and [`crate::route::machine`],
//! their wording from [`crate::words`].

pub mod candidate_row;
pub mod draft;
pub mod field;
pub mod live;
pub mod policy_editor;
pub mod route_list;
pub mod route_panel;
pub mod seed;
