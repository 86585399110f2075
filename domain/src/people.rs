//! People who sign in, as the administrator's people page and
//! `GET /api/v1/people` show them.

use crate::access::Permission;
use serde::{Deserialize, Serialize};

/// One person: who, what they may do, whether they may sign in, and how
/// many sessions they have open.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Person {
    pub id: String,
    pub name: String,
    pub permissions: Vec<Permission>,
    /// Disabled people cannot sign in and have no sessions.
    pub disabled: bool,
    /// Sessions that have not expired.
    pub sessions: i64,
}

#[cfg(any(test, feature = "reader"))]
impl crate::wire_json::FromJson for Person {
    fn from_json(v: &serde_json::Value) -> Result<Self, crate::wire_json::Error> {
        let o = crate::wire_json::Fields::of(v)?;
        Ok(Person {
            id: o.get("id")?,
            name: o.get("name")?,
            permissions: o.get("permissions")?,
            disabled: o.get("disabled")?,
            sessions: o.get("sessions")?,
        })
    }
}
