//! Permissions: what a token or a person may do. The server's rules
//! (`server::auth::rules`) say which request needs which; the browser
//! shows or hides controls by the same names.

use std::fmt;

/// One permission a token or a person holds.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Permission {
    /// Create, edit and delete dynamic profiles (their policies).
    #[serde(rename = "profiles:manage")]
    ProfilesManage,
    /// Open routes with a profile (any caller but `office`).
    #[serde(rename = "profiles:select")]
    ProfilesSelect,
    /// Manual route actions: retry now, skip, cancel, stop.
    #[serde(rename = "routes:act")]
    RoutesAct,
    /// What adapters and the runner send: failures, effects, successes,
    /// dispatch claims and acknowledgements.
    #[serde(rename = "evidence:submit")]
    EvidenceSubmit,
    /// Open routes as the `office` caller.
    #[serde(rename = "office:assign")]
    OfficeAssign,
    /// The unknown-evidence log (classifier internals).
    #[serde(rename = "catalogue:read")]
    CatalogueRead,
    /// With `evidence:submit`: reports, claims and acknowledgements for
    /// routes another caller opened (a supervisor's or an operator's
    /// tool). Without it a caller acts on the routes it opened only.
    #[serde(rename = "routes:any")]
    RoutesAny,
    /// Everything, including tokens and people.
    #[serde(rename = "admin")]
    Admin,
}

impl Permission {
    /// Every permission, in the order pages and lists show them.
    pub const ALL: [Permission; 8] = [
        Permission::ProfilesManage,
        Permission::ProfilesSelect,
        Permission::RoutesAct,
        Permission::EvidenceSubmit,
        Permission::OfficeAssign,
        Permission::CatalogueRead,
        Permission::RoutesAny,
        Permission::Admin,
    ];

    /// The wire name (as serde writes it).
    pub fn as_str(self) -> &'static str {
        match self {
            Permission::ProfilesManage => "profiles:manage",
            Permission::ProfilesSelect => "profiles:select",
            Permission::RoutesAct => "routes:act",
            Permission::EvidenceSubmit => "evidence:submit",
            Permission::OfficeAssign => "office:assign",
            Permission::CatalogueRead => "catalogue:read",
            Permission::RoutesAny => "routes:any",
            Permission::Admin => "admin",
        }
    }

    /// The permission a wire name names, if any.
    pub fn parse(s: &str) -> Option<Permission> {
        Permission::ALL.into_iter().find(|p| p.as_str() == s)
    }
}

impl fmt::Display for Permission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// In the browser: by name, as serde reads it.
#[cfg(any(test, feature = "reader"))]
impl crate::wire_json::FromJson for Permission {
    fn from_json(v: &serde_json::Value) -> Result<Permission, crate::wire_json::Error> {
        v.as_str()
            .and_then(Permission::parse)
            .ok_or(crate::wire_json::Error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_and_as_str_name_each_permission_alike() {
        for p in Permission::ALL {
            let text = serde_json::to_string(&p).unwrap();
            assert_eq!(text, format!("\"{}\"", p.as_str()));
            assert_eq!(serde_json::from_str::<Permission>(&text).unwrap(), p);
            assert_eq!(Permission::parse(p.as_str()), Some(p));
        }
        assert_eq!(Permission::parse("root"), None);
    }
}
