//! One module per page.

pub mod catalogue;
pub mod circuits;
pub mod people;
pub mod profile;
pub mod profiles;
pub mod revisions;
pub mod routes;
pub mod webhooks;
