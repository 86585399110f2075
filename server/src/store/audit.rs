//! The audit tables (`audit_log`, `profile_revisions`), for both engines
//! from one body like [`super::access`]. A profile's revisions are written
//! with the profile itself (see `sql::profiles`); this module reads them
//! and keeps the rest of the trail.

use super::{PgStore, Result, SqliteStore};
use async_trait::async_trait;

/// One audit entry as stored: `actor` is a [`domain::audit::Actor`] as
/// JSON, `action` a [`domain::audit::AuditAction`] name, `detail` JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRow {
    /// Assigned by the store; ignored when recording.
    pub id: i64,
    pub at_ms: i64,
    pub actor: String,
    pub action: String,
    pub subject: String,
    pub detail: Option<String>,
}

/// A profile as saved at one revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileRevisionRow {
    pub profile_id: String,
    pub revision: i64,
    pub name: String,
    pub document: String,
    pub actor: String,
    pub at_ms: i64,
}

#[async_trait]
pub trait AuditStore: Send + Sync {
    async fn record_audit(&self, row: &AuditRow) -> Result<()>;

    /// Entries with an id above `after`, oldest first, at most `limit`;
    /// with `subject`, only those about it.
    async fn audit_after(
        &self,
        after: i64,
        subject: Option<&str>,
        limit: i64,
    ) -> Result<Vec<AuditRow>>;

    /// Every kept revision of a profile, oldest first.
    async fn profile_revisions(&self, profile_id: &str) -> Result<Vec<ProfileRevisionRow>>;
}

type AuditTuple = (i64, i64, String, String, String, Option<String>);
type RevisionTuple = (String, i64, String, String, String, i64);

fn audit_row(t: AuditTuple) -> AuditRow {
    AuditRow {
        id: t.0,
        at_ms: t.1,
        actor: t.2,
        action: t.3,
        subject: t.4,
        detail: t.5,
    }
}

fn revision_row(t: RevisionTuple) -> ProfileRevisionRow {
    ProfileRevisionRow {
        profile_id: t.0,
        revision: t.1,
        name: t.2,
        document: t.3,
        actor: t.4,
        at_ms: t.5,
    }
}

/// The insert both this module and the profile statements use, so an
/// entry written with a profile has the same shape as any other.
pub(crate) const INSERT_AUDIT: &str =
    "INSERT INTO audit_log (at, actor, action, subject, detail) VALUES ($1, $2, $3, $4, $5)";

/// A profile's revision, written in the profile's own transaction. A
/// profile deleted and created again under its id starts again at 1 and
/// replaces the old row of that number.
pub(crate) const INSERT_REVISION: &str =
    "INSERT INTO profile_revisions (profile_id, revision, name, document, actor, at) \
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (profile_id, revision) DO UPDATE \
     SET name = excluded.name, document = excluded.document, actor = excluded.actor, \
     at = excluded.at";

macro_rules! impl_audit {
    ($store:ty) => {
        #[async_trait]
        impl AuditStore for $store {
            async fn record_audit(&self, row: &AuditRow) -> Result<()> {
                self.health()?;
                let _w = self.writer().await;
                sqlx::query(INSERT_AUDIT)
                    .bind(row.at_ms)
                    .bind(&row.actor)
                    .bind(&row.action)
                    .bind(&row.subject)
                    .bind(&row.detail)
                    .execute(&self.pool)
                    .await?;
                Ok(())
            }

            async fn audit_after(
                &self,
                after: i64,
                subject: Option<&str>,
                limit: i64,
            ) -> Result<Vec<AuditRow>> {
                let subject = subject.unwrap_or_default();
                let rows: Vec<AuditTuple> = sqlx::query_as(
                    "SELECT id, at, actor, action, subject, detail FROM audit_log \
                     WHERE id > $1 AND ($2 = '' OR subject = $3) ORDER BY id LIMIT $4",
                )
                .bind(after)
                .bind(subject)
                .bind(subject)
                .bind(limit)
                .fetch_all(&self.pool)
                .await?;
                Ok(rows.into_iter().map(audit_row).collect())
            }

            async fn profile_revisions(&self, profile_id: &str) -> Result<Vec<ProfileRevisionRow>> {
                let rows: Vec<RevisionTuple> = sqlx::query_as(
                    "SELECT profile_id, revision, name, document, actor, at FROM profile_revisions \
                     WHERE profile_id = $1 ORDER BY revision",
                )
                .bind(profile_id)
                .fetch_all(&self.pool)
                .await?;
                Ok(rows.into_iter().map(revision_row).collect())
            }
        }
    };
}

impl_audit!(SqliteStore);
impl_audit!(PgStore);
