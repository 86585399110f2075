//! The permission rules, pure: which permission each kind of request needs
//! and whether a credential carries it. No HTTP and no database here, so the
//! rules are read (and tested) in one place.
//!
//! docs/design.md (“Permissions”), as rules:
//! - only `profiles:manage` changes a policy (create, edit, delete profiles);
//! - selecting a profile (`profiles:select`, opening routes) grants nothing
//!   else: no credentials, raw evidence or classifier internals (the
//!   unknown-evidence log needs `catalogue:read`);
//! - Office assignment (`office:assign`, opening routes as the `office`
//!   caller) grants no routing-policy mutation.

pub use domain::access::Permission;

/// A permission's bit in [`Permissions`]: eight permissions fill its `u8`;
/// a ninth needs a wider set.
fn bit(p: Permission) -> u8 {
    1 << (p as u8)
}

/// A set of permissions. `admin` implies every other one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Permissions(u8);

impl Permissions {
    pub fn none() -> Permissions {
        Permissions(0)
    }

    pub fn admin() -> Permissions {
        Permissions::of(&[Permission::Admin])
    }

    pub fn of(list: &[Permission]) -> Permissions {
        Permissions(list.iter().fold(0, |bits, p| bits | bit(*p)))
    }

    /// This set and `other`'s permissions.
    pub fn with(self, other: Permissions) -> Permissions {
        Permissions(self.0 | other.0)
    }

    /// This set without `other`'s permissions.
    pub fn without(self, other: Permissions) -> Permissions {
        Permissions(self.0 & !other.0)
    }

    /// Whether this set grants `p` (directly or through `admin`).
    pub fn grants(self, p: Permission) -> bool {
        self.0 & (bit(p) | bit(Permission::Admin)) != 0
    }

    /// The permissions held, in [`Permission::ALL`] order.
    pub fn list(self) -> Vec<Permission> {
        Permission::ALL
            .into_iter()
            .filter(|p| self.0 & bit(*p) != 0)
            .collect()
    }

    /// Reads `a,b,c` (spaces allowed). Unknown names are an error naming
    /// them and the valid ones; an empty list is an error too (a credential
    /// without permissions can still read, which is what any token does, so
    /// an empty list is more likely a mistake than an intent).
    pub fn parse_list(s: &str) -> Result<Permissions, String> {
        let mut set = Permissions::none();
        let mut unknown = Vec::new();
        for name in s.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match Permission::parse(name) {
                Some(p) => set.0 |= bit(p),
                None => unknown.push(name.to_string()),
            }
        }
        if !unknown.is_empty() {
            return Err(format!(
                "unknown permission{} {}; the permissions are {}",
                if unknown.len() == 1 { "" } else { "s" },
                unknown
                    .iter()
                    .map(|u| format!("`{u}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                Permission::ALL.map(Permission::as_str).join(", ")
            ));
        }
        if set == Permissions::none() {
            return Err(format!(
                "name at least one permission: {}",
                Permission::ALL.map(Permission::as_str).join(", ")
            ));
        }
        Ok(set)
    }

    /// The stored form: `a,b` in [`Permission::ALL`] order.
    pub fn to_list_string(self) -> String {
        self.list()
            .into_iter()
            .map(Permission::as_str)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Reads the stored form, ignoring names this build does not know (a
    /// newer build's permission never widens an older build's access).
    pub fn from_stored(s: &str) -> Permissions {
        Permissions::of(
            &s.split(',')
                .filter_map(|n| Permission::parse(n.trim()))
                .collect::<Vec<_>>(),
        )
    }
}

/// What an endpoint needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Anyone, without credentials (health probes, the API description,
    /// signing in).
    Public,
    /// Any valid token or a signed-in person: reading profiles, routes,
    /// circuits and the catalogue summary.
    SignedIn,
    /// This permission (or `admin`).
    Need(Permission),
    /// Any one of these; the handler checks which one the request needs
    /// (opening a route: `office:assign` for the `office` caller,
    /// `profiles:select` otherwise).
    AnyOf(&'static [Permission]),
}

impl Rule {
    /// A short description, for the permission matrix and error messages.
    pub fn describe(self) -> String {
        match self {
            Rule::Public => "public".into(),
            Rule::SignedIn => "any token or signed-in user".into(),
            Rule::Need(p) => p.as_str().into(),
            Rule::AnyOf(ps) => ps
                .iter()
                .map(|p| p.as_str())
                .collect::<Vec<_>>()
                .join(" or "),
        }
    }
}

/// How a principal proved who it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Via {
    /// `Authorization: Bearer`.
    Token,
    /// A browser session cookie; `csrf` says whether the request carried
    /// the session's CSRF token.
    Session { csrf: bool },
    /// `serve --no-auth` (local development): everything is allowed.
    NoAuth,
}

/// Who is asking, once a credential was checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The token's or the person's id.
    pub id: String,
    /// The token's or the person's name.
    pub name: String,
    pub permissions: Permissions,
    pub via: Via,
}

impl Principal {
    /// Everything, for `--no-auth`.
    pub fn local() -> Principal {
        Principal {
            id: "local".into(),
            name: "local (no auth)".into(),
            permissions: Permissions::admin(),
            via: Via::NoAuth,
        }
    }

    pub fn grants(&self, p: Permission) -> bool {
        self.permissions.grants(p)
    }
}

/// The credential a request carried, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    /// None at all.
    Missing,
    /// Something that is not a valid credential (unknown, revoked or
    /// expired); the text says which kind, never the secret.
    Invalid(&'static str),
    Valid(Principal),
}

/// The verdict for one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Allow,
    /// 401: no valid credential.
    Unauthenticated(String),
    /// 403: a valid credential without the permission (or a browser write
    /// without its CSRF token).
    Forbidden(String),
}

/// Whether `credential` may make a request under `rule`; `mutating` is true
/// for every method but GET, HEAD and OPTIONS.
pub fn decide(rule: Rule, credential: &Credential, mutating: bool) -> Decision {
    if rule == Rule::Public {
        return Decision::Allow;
    }
    let principal = match credential {
        Credential::Missing => {
            return Decision::Unauthenticated(
                "Sign in, or send an API token as `Authorization: Bearer <token>`.".into(),
            )
        }
        Credential::Invalid(what) => {
            return Decision::Unauthenticated(format!(
                "The {what} is not valid (unknown, revoked or expired); sign in again or use another token."
            ))
        }
        Credential::Valid(p) => p,
    };
    // A browser's cookie is sent with every request to this site, so a
    // write from the browser must also prove it came from this app's page:
    // the per-session CSRF token only the page can read.
    if mutating && principal.via == (Via::Session { csrf: false }) {
        return Decision::Forbidden(
            "This browser request lacks its CSRF token (x-csrf-token); reload the page and try again."
                .into(),
        );
    }
    let allowed = match rule {
        Rule::Public | Rule::SignedIn => true,
        Rule::Need(p) => principal.grants(p),
        Rule::AnyOf(ps) => ps.iter().any(|p| principal.grants(*p)),
    };
    if allowed {
        Decision::Allow
    } else {
        Decision::Forbidden(format!(
            "`{}` may not do this; it needs the `{}` permission.",
            principal.name,
            rule.describe()
        ))
    }
}

/// Opening a route: the `office` caller needs `office:assign`, every other
/// caller `profiles:select`. Neither grants anything else.
pub fn may_open_route(principal: &Principal, office: bool) -> Result<(), String> {
    let need = if office {
        Permission::OfficeAssign
    } else {
        Permission::ProfilesSelect
    };
    if principal.grants(need) {
        Ok(())
    } else {
        Err(format!(
            "`{}` may not open this route; it needs the `{need}` permission.",
            principal.name
        ))
    }
}

/// The opener recorded for routes opened before openers were (migration
/// `20261207000000_route_openers`): every caller that may submit evidence
/// may report on them, as before.
pub const ANY_OPENER: &str = "*";

/// Whether `principal` may report on, claim or acknowledge for a route
/// `opener` opened (`None`: no opener recorded, or no such route). The
/// answer to a refusal is the same 404 as for a route that does not exist,
/// so it tells nobody which routes exist.
pub fn may_report_on(principal: &Principal, opener: Option<&str>) -> bool {
    principal.grants(Permission::RoutesAny)
        || opener.is_some_and(|o| o == principal.id || o == ANY_OPENER)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(perms: &[Permission]) -> Credential {
        Credential::Valid(Principal {
            id: "t".into(),
            name: "t".into(),
            permissions: Permissions::of(perms),
            via: Via::Token,
        })
    }

    fn session(perms: &[Permission], csrf: bool) -> Credential {
        Credential::Valid(Principal {
            id: "u".into(),
            name: "u".into(),
            permissions: Permissions::of(perms),
            via: Via::Session { csrf },
        })
    }

    #[test]
    fn public_needs_nothing() {
        assert_eq!(
            decide(Rule::Public, &Credential::Missing, true),
            Decision::Allow
        );
        assert_eq!(
            decide(Rule::Public, &Credential::Invalid("token"), false),
            Decision::Allow
        );
    }

    #[test]
    fn missing_or_invalid_credentials_are_401() {
        for rule in [
            Rule::SignedIn,
            Rule::Need(Permission::RoutesAct),
            Rule::AnyOf(&[Permission::OfficeAssign]),
        ] {
            assert!(matches!(
                decide(rule, &Credential::Missing, false),
                Decision::Unauthenticated(_)
            ));
            assert!(matches!(
                decide(rule, &Credential::Invalid("token"), true),
                Decision::Unauthenticated(_)
            ));
        }
    }

    #[test]
    fn any_token_reads() {
        assert_eq!(decide(Rule::SignedIn, &token(&[]), false), Decision::Allow);
    }

    #[test]
    fn only_profiles_manage_changes_policy() {
        let rule = Rule::Need(Permission::ProfilesManage);
        for p in Permission::ALL {
            let expected = matches!(p, Permission::ProfilesManage | Permission::Admin);
            assert_eq!(
                decide(rule, &token(&[p]), true) == Decision::Allow,
                expected,
                "{p}"
            );
        }
    }

    #[test]
    fn office_assign_opens_only_office_routes() {
        let office = match token(&[Permission::OfficeAssign]) {
            Credential::Valid(p) => p,
            _ => unreachable!(),
        };
        assert!(may_open_route(&office, true).is_ok());
        assert!(may_open_route(&office, false).is_err());
        let select = match token(&[Permission::ProfilesSelect]) {
            Credential::Valid(p) => p,
            _ => unreachable!(),
        };
        assert!(may_open_route(&select, false).is_ok());
        assert!(may_open_route(&select, true).is_err());
    }

    #[test]
    fn only_the_opener_or_routes_any_reports_on_a_route() {
        let principal = |id: &str, perms: &[Permission]| Principal {
            id: id.into(),
            name: id.into(),
            permissions: Permissions::of(perms),
            via: Via::Token,
        };
        let runner = principal("t1", &[Permission::EvidenceSubmit]);
        assert!(may_report_on(&runner, Some("t1")));
        assert!(!may_report_on(&runner, Some("t2")));
        assert!(!may_report_on(&runner, None));
        assert!(may_report_on(&runner, Some(ANY_OPENER)));
        for any in [
            principal("s", &[Permission::EvidenceSubmit, Permission::RoutesAny]),
            principal("a", &[Permission::Admin]),
        ] {
            assert!(may_report_on(&any, Some("t1")));
            assert!(may_report_on(&any, None));
        }
    }

    #[test]
    fn browser_writes_need_the_csrf_token() {
        let rule = Rule::Need(Permission::RoutesAct);
        assert!(matches!(
            decide(rule, &session(&[Permission::Admin], false), true),
            Decision::Forbidden(_)
        ));
        assert_eq!(
            decide(rule, &session(&[Permission::Admin], true), true),
            Decision::Allow
        );
        // Reads need no CSRF token: a cross-site page cannot read answers.
        assert_eq!(
            decide(Rule::SignedIn, &session(&[], false), false),
            Decision::Allow
        );
    }

    #[test]
    fn permission_lists_round_trip_and_reject_unknown_names() {
        let set = Permissions::parse_list("routes:act, evidence:submit").unwrap();
        assert_eq!(set.to_list_string(), "routes:act,evidence:submit");
        assert_eq!(Permissions::from_stored(&set.to_list_string()), set);
        let err = Permissions::parse_list("routes:act,root").unwrap_err();
        assert!(
            err.contains("`root`") && err.contains("profiles:manage"),
            "{err}"
        );
        assert!(Permissions::parse_list(" , ").is_err());
        assert!(Permissions::admin().grants(Permission::CatalogueRead));
        assert!(!Permissions::of(&[Permission::RoutesAct]).grants(Permission::Admin));
    }
}
