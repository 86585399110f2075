//! The access tables (API tokens, users, sign-in links, sessions), for
//! both engines from one body like [`super::sql`]. Only digests of secrets
//! ever reach these methods.

use super::{PgStore, Result, SqliteStore};
use async_trait::async_trait;

/// An API token row. `secret_hash` is the SHA-256 of the secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRow {
    pub id: String,
    pub name: String,
    pub secret_hash: String,
    pub permissions: String,
    pub created_at_ms: i64,
    pub revoked_at_ms: Option<i64>,
}

/// A person who signs in in the browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserRow {
    pub id: String,
    pub name: String,
    pub permissions: String,
    pub created_at_ms: i64,
}

/// A person as `user list` shows them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PersonRow {
    pub user: UserRow,
    /// When they were disabled; `None` while enabled.
    pub disabled_at_ms: Option<i64>,
    /// Their sessions that have not expired.
    pub sessions: i64,
}

#[async_trait]
pub trait AccessStore: Send + Sync {
    /// A live name already taken answers `AlreadyExists`.
    async fn insert_token(&self, row: &TokenRow) -> Result<()>;

    /// Every token, live and revoked, oldest first.
    async fn list_tokens(&self) -> Result<Vec<TokenRow>>;

    /// Revokes the live token whose id or name is `id_or_name`; answers the
    /// revoked rows (none when nothing matched).
    async fn revoke_token(&self, id_or_name: &str, now_ms: i64) -> Result<Vec<TokenRow>>;

    /// The live token with this digest.
    async fn live_token(&self, secret_hash: &str) -> Result<Option<TokenRow>>;

    async fn count_users(&self) -> Result<i64>;

    /// A name already taken answers `AlreadyExists`.
    async fn insert_user(&self, row: &UserRow) -> Result<()>;

    async fn user_named(&self, name: &str) -> Result<Option<UserRow>>;

    async fn insert_sign_in_link(
        &self,
        secret_hash: &str,
        user_id: &str,
        expires_at_ms: i64,
    ) -> Result<()>;

    /// Uses up a sign-in link: it is deleted whether or not it is still
    /// valid; answers its user while it had not expired at `now_ms`.
    async fn take_sign_in_link(&self, secret_hash: &str, now_ms: i64) -> Result<Option<UserRow>>;

    async fn insert_session(
        &self,
        secret_hash: &str,
        user_id: &str,
        created_at_ms: i64,
        expires_at_ms: i64,
    ) -> Result<()>;

    /// The user of the session with this digest, while it has not expired.
    async fn session_user(&self, secret_hash: &str, now_ms: i64) -> Result<Option<UserRow>>;

    async fn delete_session(&self, secret_hash: &str) -> Result<()>;

    /// Everyone, by name, with their live sessions counted at `now_ms`.
    async fn list_people(&self, now_ms: i64) -> Result<Vec<PersonRow>>;

    /// Disables (`Some(at)`) or enables (`None`) the person whose id or name
    /// is `id_or_name`; disabling ends their sessions and sign-in links.
    /// Answers the person, `None` when nobody matched.
    async fn set_user_disabled(
        &self,
        id_or_name: &str,
        disabled_at_ms: Option<i64>,
    ) -> Result<Option<UserRow>>;

    /// Removes a person with their sessions and sign-in links.
    async fn remove_user(&self, id_or_name: &str) -> Result<Option<UserRow>>;

    /// Sets a person's permissions (the stored list form).
    async fn set_user_permissions(
        &self,
        id_or_name: &str,
        permissions: &str,
    ) -> Result<Option<UserRow>>;
}

type TokenTuple = (String, String, String, String, i64, Option<i64>);
type UserTuple = (String, String, String, i64);

fn token_row(t: TokenTuple) -> TokenRow {
    TokenRow {
        id: t.0,
        name: t.1,
        secret_hash: t.2,
        permissions: t.3,
        created_at_ms: t.4,
        revoked_at_ms: t.5,
    }
}

fn user_row(t: UserTuple) -> UserRow {
    UserRow {
        id: t.0,
        name: t.1,
        permissions: t.2,
        created_at_ms: t.3,
    }
}

pub(crate) const TOKEN_COLUMNS: &str = "id, name, secret_hash, permissions, created_at, revoked_at";

/// A live token by its secret's digest.
pub(crate) static LIVE_TOKEN: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!("SELECT {TOKEN_COLUMNS} FROM api_tokens WHERE secret_hash = $1 AND revoked_at IS NULL")
});
const USER_COLUMNS: &str = "id, name, permissions, created_at";

macro_rules! impl_access {
    ($store:ty) => {
        #[async_trait]
        impl AccessStore for $store {
            async fn insert_token(&self, row: &TokenRow) -> Result<()> {
                self.health()?;
                let _w = self.writer().await;
                sqlx::query(&format!(
                    "INSERT INTO api_tokens ({TOKEN_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)"
                ))
                .bind(&row.id)
                .bind(&row.name)
                .bind(&row.secret_hash)
                .bind(&row.permissions)
                .bind(row.created_at_ms)
                .bind(row.revoked_at_ms)
                .execute(&self.pool)
                .await?;
                Ok(())
            }

            async fn list_tokens(&self) -> Result<Vec<TokenRow>> {
                let rows: Vec<TokenTuple> = sqlx::query_as(&format!(
                    "SELECT {TOKEN_COLUMNS} FROM api_tokens ORDER BY created_at, name"
                ))
                .fetch_all(&self.pool)
                .await?;
                Ok(rows.into_iter().map(token_row).collect())
            }

            async fn revoke_token(&self, id_or_name: &str, now_ms: i64) -> Result<Vec<TokenRow>> {
                self.health()?;
                let _w = self.writer().await;
                let rows: Vec<TokenTuple> = sqlx::query_as(&format!(
                    "UPDATE api_tokens SET revoked_at = $1 \
                     WHERE revoked_at IS NULL AND (id = $2 OR name = $2) RETURNING {TOKEN_COLUMNS}"
                ))
                .bind(now_ms)
                .bind(id_or_name)
                .fetch_all(&self.pool)
                .await?;
                Ok(rows.into_iter().map(token_row).collect())
            }

            async fn live_token(&self, secret_hash: &str) -> Result<Option<TokenRow>> {
                // Every request with a token: a hot read.
                if let Some(r) = self.readers() {
                    return r.live_token(secret_hash);
                }
                let mut hot = self.hot.take().await?;
                let row: Option<TokenTuple> = sqlx::query_as(LIVE_TOKEN.as_str())
                    .bind(secret_hash)
                    .fetch_optional(&mut *hot)
                    .await?;
                hot.keep();
                Ok(row.map(token_row))
            }

            async fn count_users(&self) -> Result<i64> {
                Ok(sqlx::query_scalar("SELECT COUNT(*) FROM users")
                    .fetch_one(&self.pool)
                    .await?)
            }

            async fn insert_user(&self, row: &UserRow) -> Result<()> {
                self.health()?;
                let _w = self.writer().await;
                sqlx::query(&format!(
                    "INSERT INTO users ({USER_COLUMNS}) VALUES ($1, $2, $3, $4)"
                ))
                .bind(&row.id)
                .bind(&row.name)
                .bind(&row.permissions)
                .bind(row.created_at_ms)
                .execute(&self.pool)
                .await?;
                Ok(())
            }

            async fn user_named(&self, name: &str) -> Result<Option<UserRow>> {
                let row: Option<UserTuple> = sqlx::query_as(&format!(
                    "SELECT {USER_COLUMNS} FROM users WHERE name = $1"
                ))
                .bind(name)
                .fetch_optional(&self.pool)
                .await?;
                Ok(row.map(user_row))
            }

            async fn insert_sign_in_link(
                &self,
                secret_hash: &str,
                user_id: &str,
                expires_at_ms: i64,
            ) -> Result<()> {
                self.health()?;
                let _w = self.writer().await;
                sqlx::query(
                    "INSERT INTO sign_in_links (secret_hash, user_id, expires_at) VALUES ($1, $2, $3)",
                )
                .bind(secret_hash)
                .bind(user_id)
                .bind(expires_at_ms)
                .execute(&self.pool)
                .await?;
                Ok(())
            }

            async fn take_sign_in_link(
                &self,
                secret_hash: &str,
                now_ms: i64,
            ) -> Result<Option<UserRow>> {
                // Anyone may post a code: one that names no link is
                // answered from a read, without queueing for the write
                // lock behind route transitions.
                let known: Option<i64> = sqlx::query_scalar(
                    "SELECT expires_at FROM sign_in_links WHERE secret_hash = $1",
                )
                .bind(secret_hash)
                .fetch_optional(&self.pool)
                .await?;
                if !known.is_some_and(|expires_at| expires_at > now_ms) {
                    return Ok(None);
                }
                self.health()?;
                let _w = self.writer().await;
                let link: Option<(String, i64)> = sqlx::query_as(
                    "DELETE FROM sign_in_links WHERE secret_hash = $1 RETURNING user_id, expires_at",
                )
                .bind(secret_hash)
                .fetch_optional(&self.pool)
                .await?;
                let Some((user_id, expires_at)) = link else {
                    return Ok(None);
                };
                if expires_at <= now_ms {
                    return Ok(None);
                }
                let row: Option<UserTuple> = sqlx::query_as(&format!(
                    "SELECT {USER_COLUMNS} FROM users WHERE id = $1 AND disabled_at IS NULL"
                ))
                .bind(user_id)
                .fetch_optional(&self.pool)
                .await?;
                Ok(row.map(user_row))
            }

            async fn insert_session(
                &self,
                secret_hash: &str,
                user_id: &str,
                created_at_ms: i64,
                expires_at_ms: i64,
            ) -> Result<()> {
                self.health()?;
                let _w = self.writer().await;
                sqlx::query(
                    "INSERT INTO sessions (secret_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)",
                )
                .bind(secret_hash)
                .bind(user_id)
                .bind(created_at_ms)
                .bind(expires_at_ms)
                .execute(&self.pool)
                .await?;
                Ok(())
            }

            async fn session_user(
                &self,
                secret_hash: &str,
                now_ms: i64,
            ) -> Result<Option<UserRow>> {
                // A disabled person's sessions are deleted when they are
                // disabled; the condition also covers one opened meanwhile.
                let row: Option<UserTuple> = sqlx::query_as(
                    "SELECT u.id, u.name, u.permissions, u.created_at FROM sessions s \
                     JOIN users u ON u.id = s.user_id WHERE s.secret_hash = $1 AND s.expires_at > $2 \
                     AND u.disabled_at IS NULL",
                )
                .bind(secret_hash)
                .bind(now_ms)
                .fetch_optional(&self.pool)
                .await?;
                Ok(row.map(user_row))
            }

            async fn list_people(&self, now_ms: i64) -> Result<Vec<PersonRow>> {
                let rows: Vec<(String, String, String, i64, Option<i64>, i64)> = sqlx::query_as(
                    "SELECT u.id, u.name, u.permissions, u.created_at, u.disabled_at, \
                     (SELECT COUNT(*) FROM sessions s WHERE s.user_id = u.id AND s.expires_at > $1) \
                     FROM users u ORDER BY u.name",
                )
                .bind(now_ms)
                .fetch_all(&self.pool)
                .await?;
                Ok(rows
                    .into_iter()
                    .map(|(id, name, permissions, created_at, disabled_at_ms, sessions)| PersonRow {
                        user: user_row((id, name, permissions, created_at)),
                        disabled_at_ms,
                        sessions,
                    })
                    .collect())
            }

            async fn set_user_disabled(
                &self,
                id_or_name: &str,
                disabled_at_ms: Option<i64>,
            ) -> Result<Option<UserRow>> {
                self.health()?;
                let _w = self.writer().await;
                // Disabled first: from this statement on, no session of
                // theirs is accepted (`session_user` checks), whatever
                // the deletes below.
                let row: Option<UserTuple> = sqlx::query_as(&format!(
                    "UPDATE users SET disabled_at = $1 WHERE id = $2 OR name = $2 \
                     RETURNING {USER_COLUMNS}"
                ))
                .bind(disabled_at_ms)
                .bind(id_or_name)
                .fetch_optional(&self.pool)
                .await?;
                let Some(row) = row.map(user_row) else {
                    return Ok(None);
                };
                if disabled_at_ms.is_some() {
                    for table in ["sessions", "sign_in_links"] {
                        sqlx::query(&format!("DELETE FROM {table} WHERE user_id = $1"))
                            .bind(&row.id)
                            .execute(&self.pool)
                            .await?;
                    }
                }
                Ok(Some(row))
            }

            async fn remove_user(&self, id_or_name: &str) -> Result<Option<UserRow>> {
                self.health()?;
                let _w = self.writer().await;
                let row: Option<UserTuple> = sqlx::query_as(&format!(
                    "SELECT {USER_COLUMNS} FROM users WHERE id = $1 OR name = $1"
                ))
                .bind(id_or_name)
                .fetch_optional(&self.pool)
                .await?;
                let Some(row) = row.map(user_row) else {
                    return Ok(None);
                };
                // Sessions and links first: SQLite enforces the foreign
                // keys' cascade only with a pragma.
                for table in ["sessions", "sign_in_links"] {
                    sqlx::query(&format!("DELETE FROM {table} WHERE user_id = $1"))
                        .bind(&row.id)
                        .execute(&self.pool)
                        .await?;
                }
                sqlx::query("DELETE FROM users WHERE id = $1")
                    .bind(&row.id)
                    .execute(&self.pool)
                    .await?;
                Ok(Some(row))
            }

            async fn set_user_permissions(
                &self,
                id_or_name: &str,
                permissions: &str,
            ) -> Result<Option<UserRow>> {
                self.health()?;
                let _w = self.writer().await;
                let row: Option<UserTuple> = sqlx::query_as(&format!(
                    "UPDATE users SET permissions = $1 WHERE id = $2 OR name = $2 \
                     RETURNING {USER_COLUMNS}"
                ))
                .bind(permissions)
                .bind(id_or_name)
                .fetch_optional(&self.pool)
                .await?;
                Ok(row.map(user_row))
            }

            async fn delete_session(&self, secret_hash: &str) -> Result<()> {
                self.health()?;
                let _w = self.writer().await;
                sqlx::query("DELETE FROM sessions WHERE secret_hash = $1")
                    .bind(secret_hash)
                    .execute(&self.pool)
                    .await?;
                Ok(())
            }
        }
    };
}

impl_access!(SqliteStore);
impl_access!(PgStore);
