//! One module per page.

pub mod profile;
pub mod profiles;
pub mod routes;
