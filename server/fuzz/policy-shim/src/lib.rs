//! `app::policy::class`, the same source file, without Leptos.

#[doc(hidden)]
#[path = "../../../../app/src/policy/class.rs"]
pub mod class;

pub mod policy {
    pub use crate::class;
    pub use crate::class::{ErrorClass, PolicyClass};
}
