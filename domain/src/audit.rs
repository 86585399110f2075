//! The audit trail's vocabulary: who did something ([`Actor`]), what they
//! did ([`AuditAction`]), the trail's entries ([`AuditEntry`]) and a
//! profile's kept revisions ([`ProfileRevision`]).
//!
//! Every committed route event names its actor, and every manual action,
//! profile change, token and user change and circuit release is an
//! [`AuditEntry`], so the change behind an incident can be traced to a
//! person or a token and a time.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

wire_names! {
    /// What kind of actor did something.
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum ActorKind {
        /// The server's own timers (a due retry, a wait that ended, a
        /// lease or dispatch timeout).
        Timer,
        /// The route's caller: an adapter or the runner reporting
        /// evidence, claiming or acknowledging (the token or person it
        /// sent with is named).
        Caller,
        /// A person signed in in the browser.
        Person,
        /// An API token.
        Token,
        /// The server running with `--no-auth`: whoever can reach it.
        Local,
        /// An operator on the server's host (`kandev-recovery token …`,
        /// `user …`): the operating-system user is named.
        CommandLine,
    }
}

/// Who did something. `id` and `name` name the person, the token or the
/// host user; a timer has neither.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Actor {
    pub kind: ActorKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Actor {
    /// The server's timers.
    pub fn timer() -> Actor {
        Actor {
            kind: ActorKind::Timer,
            id: None,
            name: None,
        }
    }

    /// `kind` with the id and name of who it is.
    pub fn named(kind: ActorKind, id: &str, name: &str) -> Actor {
        Actor {
            kind,
            id: Some(id.to_string()),
            name: Some(name.to_string()),
        }
    }

    /// A short text for tables and logs: `timer`, `person alice`,
    /// `token ci`, `caller token ci`.
    pub fn describe(&self) -> String {
        match (&self.name, self.kind) {
            (None, kind) => kind.as_str().to_string(),
            (Some(name), kind) => format!("{} {name}", kind.as_str().replace('_', " ")),
        }
    }
}

wire_names! {
    /// What an audited change was.
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum AuditAction {
        /// A manual route action (retry now, skip, cancel, stop, complete).
        #[serde(rename = "route.action")]
        #[strum(serialize = "route.action")]
        RouteAction,
        #[serde(rename = "profile.created")]
        #[strum(serialize = "profile.created")]
        ProfileCreated,
        #[serde(rename = "profile.updated")]
        #[strum(serialize = "profile.updated")]
        ProfileUpdated,
        #[serde(rename = "profile.deleted")]
        #[strum(serialize = "profile.deleted")]
        ProfileDeleted,
        #[serde(rename = "token.created")]
        #[strum(serialize = "token.created")]
        TokenCreated,
        #[serde(rename = "token.revoked")]
        #[strum(serialize = "token.revoked")]
        TokenRevoked,
        #[serde(rename = "person.added")]
        #[strum(serialize = "person.added")]
        PersonAdded,
        #[serde(rename = "person.disabled")]
        #[strum(serialize = "person.disabled")]
        PersonDisabled,
        #[serde(rename = "person.enabled")]
        #[strum(serialize = "person.enabled")]
        PersonEnabled,
        #[serde(rename = "person.removed")]
        #[strum(serialize = "person.removed")]
        PersonRemoved,
        #[serde(rename = "person.permissions")]
        #[strum(serialize = "person.permissions")]
        PersonPermissions,
        #[serde(rename = "circuit.released")]
        #[strum(serialize = "circuit.released")]
        CircuitReleased,
        #[serde(rename = "circuit.probed")]
        #[strum(serialize = "circuit.probed")]
        CircuitProbed,
        #[serde(rename = "webhook.created")]
        #[strum(serialize = "webhook.created")]
        WebhookCreated,
        #[serde(rename = "webhook.removed")]
        #[strum(serialize = "webhook.removed")]
        WebhookRemoved,
    }
}

/// One entry of the audit trail (`GET /api/v1/audit`), oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AuditEntry {
    pub id: i64,
    #[serde(deserialize_with = "crate::wire_time::rfc3339")]
    pub at: DateTime<Utc>,
    pub actor: Actor,
    pub action: AuditAction,
    /// The id or name of what changed (a route, profile, token, person,
    /// circuit or webhook).
    pub subject: String,
    /// What changed, where it says more than the action (the manual
    /// action and its generation, a profile's new revision, a person's
    /// permissions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub detail: Option<serde_json::Value>,
}

/// A profile as it was saved at one revision, and by whom.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProfileRevision {
    pub profile_id: String,
    pub revision: i64,
    pub name: String,
    /// The profile as stored: `{"prefer", "candidates"}` (a bare candidate
    /// list for revisions saved before the preference existed).
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub document: serde_json::Value,
    pub actor: Actor,
    #[serde(deserialize_with = "crate::wire_time::rfc3339")]
    pub at: DateTime<Utc>,
}

/// One field that differs between two revisions of a profile: its path
/// (`candidates[1].policy.hard.retry.max_retries`) and its value in each
/// (`None`: absent there), as JSON text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldChange {
    pub path: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// What changed between two revision documents, field by field, in path
/// order. Objects are compared key by key and lists item by item, so a
/// changed retry count is one line, not the whole candidate.
pub fn revision_changes(before: &serde_json::Value, after: &serde_json::Value) -> Vec<FieldChange> {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    flatten("", before, &mut a);
    flatten("", after, &mut b);
    let a: std::collections::BTreeMap<String, String> = a.into_iter().collect();
    let b: std::collections::BTreeMap<String, String> = b.into_iter().collect();
    let paths: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    paths
        .into_iter()
        .filter(|p| a.get(*p) != b.get(*p))
        .map(|p| FieldChange {
            path: p.clone(),
            before: a.get(p).cloned(),
            after: b.get(p).cloned(),
        })
        .collect()
}

/// Leaves of a JSON value by path; an empty object or list is a leaf.
fn flatten(path: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
    use serde_json::Value;
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, v) in m {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                flatten(&p, v, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (i, v) in items.iter().enumerate() {
                flatten(&format!("{path}[{i}]"), v, out);
            }
        }
        leaf => out.push((path.to_string(), leaf.to_string())),
    }
}

#[cfg(any(test, feature = "reader"))]
mod read {
    use super::*;
    use crate::wire_json::{Error, FromJson};
    use serde_json::Value;

    impl FromJson for Actor {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = crate::wire_json::Fields::of(v)?;
            Ok(Actor {
                kind: o.get("kind")?,
                id: o.get("id")?,
                name: o.get("name")?,
            })
        }
    }

    impl FromJson for AuditEntry {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = crate::wire_json::Fields::of(v)?;
            Ok(AuditEntry {
                id: o.get("id")?,
                at: o.get("at")?,
                actor: o.get("actor")?,
                action: o.get("action")?,
                subject: o.get("subject")?,
                detail: o.get("detail")?,
            })
        }
    }

    impl FromJson for ProfileRevision {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = crate::wire_json::Fields::of(v)?;
            Ok(ProfileRevision {
                profile_id: o.get("profile_id")?,
                revision: o.get("revision")?,
                name: o.get("name")?,
                document: o.get("document")?,
                actor: o.get("actor")?,
                at: o.get("at")?,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_actor_reads_back_as_written_and_describes_itself() {
        for actor in [
            Actor::timer(),
            Actor::named(ActorKind::Person, "u1", "alice"),
            Actor::named(ActorKind::CommandLine, "root", "root"),
        ] {
            let text = serde_json::to_string(&actor).unwrap();
            assert_eq!(serde_json::from_str::<Actor>(&text).unwrap(), actor);
            let read: Actor = crate::wire_json::read(&text).unwrap();
            assert_eq!(read, actor);
        }
        assert_eq!(Actor::timer().describe(), "timer");
        assert_eq!(
            Actor::named(ActorKind::CommandLine, "root", "root").describe(),
            "command line root"
        );
        assert_eq!(
            serde_json::to_string(&Actor::timer()).unwrap(),
            r#"{"kind":"timer"}"#
        );
    }

    #[test]
    fn revisions_differ_field_by_field() {
        let before = serde_json::json!({"prefer": "stay", "candidates": [
            {"label": "A", "policy": {"hard": {"retry": {"max_retries": 3}}}},
            {"label": "B"}]});
        let after = serde_json::json!({"prefer": "stay", "candidates": [
            {"label": "A", "policy": {"hard": {"retry": {"max_retries": 5}}}}],
            "note": []});
        let changes = revision_changes(&before, &after);
        let line = |c: &FieldChange| {
            format!(
                "{}: {} -> {}",
                c.path,
                c.before.as_deref().unwrap_or("-"),
                c.after.as_deref().unwrap_or("-")
            )
        };
        let lines: Vec<String> = changes.iter().map(line).collect();
        assert_eq!(
            lines,
            [
                "candidates[0].policy.hard.retry.max_retries: 3 -> 5",
                "candidates[1].label: \"B\" -> -",
                "note: - -> []"
            ]
        );
        assert!(revision_changes(&before, &before).is_empty());
    }

    #[test]
    fn audit_actions_have_dotted_names() {
        assert_eq!(AuditAction::ProfileUpdated.as_str(), "profile.updated");
        assert_eq!(
            AuditAction::parse("circuit.released"),
            Some(AuditAction::CircuitReleased)
        );
    }
}
