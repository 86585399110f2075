//! UI building blocks. Components render and forward events; the rules
//! they show come from [`crate::policy`].

pub mod candidate_row;
pub mod draft;
pub mod field;
pub mod policy_editor;
