//! The access service: checks the credential a request carries (a bearer
//! token or a session cookie) against the database, and creates tokens,
//! users, sign-in links and sessions. Every check reads the database, so a
//! revoked token or a signed-out session stops working at once.

use super::limit::RateLimit;
use super::rules::{Credential, Permissions, Principal, Via};
use super::secret;
use crate::clock::SharedClock;
use crate::store::{DecisionRows, DynStore, PersonRow, StoreError, TokenRow, UserRow};
use axum::http::HeaderMap;
use domain::audit::AuditAction;
use serde_json::json;

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "kandev_session";
/// The cookie holding the session's CSRF token, readable by the page.
pub const CSRF_COOKIE: &str = "kandev_csrf";
/// The header a browser write carries its session's CSRF token in.
pub const CSRF_HEADER: &str = "x-csrf-token";
/// How long a browser session lasts.
pub const SESSION_DAYS: i64 = 14;
/// How long a sign-in link stays valid (it also works only once).
pub const SIGN_IN_LINK_HOURS: i64 = 24;

#[derive(Clone)]
pub struct Access {
    store: DynStore,
    clock: SharedClock,
    /// `serve --no-auth`: every request is the local principal.
    no_auth: bool,
    /// Evidence reports per token (or person) and minute; `None`: no limit.
    evidence: Option<std::sync::Arc<RateLimit>>,
    /// Routes opened per token (or person) and minute; `None`: no limit.
    openings: Option<std::sync::Arc<RateLimit>>,
}

/// A token just created: its secret is only ever here, once.
pub struct NewToken {
    pub row: TokenRow,
    pub secret: String,
}

impl Access {
    pub fn new(store: DynStore, clock: SharedClock, no_auth: bool) -> Access {
        Access {
            store,
            clock,
            no_auth,
            evidence: None,
            openings: None,
        }
    }

    /// Limits route creation to `per_minute` per token or person (0: no
    /// limit): every route is a row kept as long as the database is, so a
    /// runaway caller is slowed down before it fills the disk.
    pub fn with_route_limit(mut self, per_minute: u32) -> Access {
        self.openings = (per_minute > 0).then(|| std::sync::Arc::new(RateLimit::new(per_minute)));
        self
    }

    /// Takes one route opening from `principal`'s allowance; when it is
    /// used up, answers the seconds until the next one.
    pub fn take_opening(&self, principal: &Principal) -> Result<(), u64> {
        match &self.openings {
            Some(limit) => limit.take(&principal.id, std::time::Instant::now()),
            None => Ok(()),
        }
    }

    /// Limits evidence reports to `per_minute` per token or person (0: no
    /// limit).
    pub fn with_evidence_limit(mut self, per_minute: u32) -> Access {
        self.evidence = (per_minute > 0).then(|| std::sync::Arc::new(RateLimit::new(per_minute)));
        self
    }

    /// Takes one evidence report from `principal`'s allowance; when it is
    /// used up, answers the seconds until the next one.
    pub fn take_evidence(&self, principal: &Principal) -> Result<(), u64> {
        match &self.evidence {
            Some(limit) => limit.take(&principal.id, std::time::Instant::now()),
            None => Ok(()),
        }
    }

    pub fn no_auth(&self) -> bool {
        self.no_auth
    }

    fn now_ms(&self) -> i64 {
        self.clock.now().timestamp_millis()
    }

    /// The credential `headers` carry. A bearer token wins over a cookie
    /// (a script that sends a token means that token).
    pub async fn resolve(&self, headers: &HeaderMap) -> Result<Credential, StoreError> {
        if self.no_auth {
            return Ok(Credential::Valid(Principal::local()));
        }
        if let Some(secret) = bearer(headers) {
            let Some(secret) = secret else {
                return Ok(Credential::Invalid(
                    "Authorization header (use `Bearer <token>`)",
                ));
            };
            let digest = secret::digest(secret);
            return Ok(token_credential(
                self.store.live_token(&digest).await?,
                &digest,
            ));
        }
        if let Some(session) = cookie(headers, SESSION_COOKIE) {
            let csrf = headers
                .get(CSRF_HEADER)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| secret::same(v, &secret::csrf_of(session)));
            return Ok(match self.session(session).await? {
                Some(user) => Credential::Valid(Principal {
                    id: user.id,
                    name: user.name,
                    permissions: Permissions::from_stored(&user.permissions),
                    via: Via::Session { csrf },
                }),
                None => Credential::Invalid("session (sign in again)"),
            });
        }
        Ok(Credential::Missing)
    }

    /// [`Access::resolve`], and with a bearer token also the route `id`
    /// as deciding on a failure reads it, both in one read of the store
    /// ([`crate::store::Store::get_route_for_decision_and_token`]). The
    /// route is answered only with a valid credential, and `None` when
    /// there is no such route or it was not read with the token.
    pub async fn resolve_for_decision(
        &self,
        headers: &HeaderMap,
        id: &str,
    ) -> Result<(Credential, Option<DecisionRows>), StoreError> {
        let secret = match bearer(headers) {
            Some(Some(secret)) if !self.no_auth => secret,
            _ => return Ok((self.resolve(headers).await?, None)),
        };
        let digest = secret::digest(secret);
        let (route, token) = self
            .store
            .get_route_for_decision_and_token(id, &digest)
            .await?;
        let credential = token_credential(token, &digest);
        let route = route.filter(|_| matches!(credential, Credential::Valid(_)));
        Ok((credential, route))
    }

    async fn session(&self, secret: &str) -> Result<Option<UserRow>, StoreError> {
        self.store
            .session_user(&secret::digest(secret), self.now_ms())
            .await
    }

    /// Creates a token; the secret is answered once and never stored.
    pub async fn create_token(
        &self,
        name: &str,
        permissions: Permissions,
    ) -> Result<NewToken, StoreError> {
        self.create_token_with_secret(name, permissions, secret::generate(secret::TOKEN_PREFIX))
            .await
    }

    /// Creates a token with a secret made elsewhere (the demo's agents
    /// make theirs before the server starts; tests use a fixed one).
    pub async fn create_token_with_secret(
        &self,
        name: &str,
        permissions: Permissions,
        secret: String,
    ) -> Result<NewToken, StoreError> {
        let row = TokenRow {
            id: uuid::Uuid::new_v4().simple().to_string(),
            name: name.to_string(),
            secret_hash: secret::digest(&secret),
            permissions: permissions.to_list_string(),
            created_at_ms: chrono::Utc::now().timestamp_millis(),
            revoked_at_ms: None,
        };
        self.store.insert_token(&row).await?;
        self.audited(
            AuditAction::TokenCreated,
            &row.id,
            json!({ "name": row.name, "permissions": row.permissions }),
        )
        .await?;
        Ok(NewToken { row, secret })
    }

    /// Records `action` on `subject` in the audit trail, as the current
    /// request's actor (the command line's, the server's own otherwise).
    async fn audited(
        &self,
        action: AuditAction,
        subject: &str,
        detail: serde_json::Value,
    ) -> Result<(), StoreError> {
        crate::audit::Audit::new(self.store.clone(), self.clock.clone())
            .record(action, subject, Some(detail))
            .await
    }

    pub async fn list_tokens(&self) -> Result<Vec<TokenRow>, StoreError> {
        self.store.list_tokens().await
    }

    /// Revokes the live token with this id or name.
    pub async fn revoke_token(&self, id_or_name: &str) -> Result<Vec<TokenRow>, StoreError> {
        let revoked = self
            .store
            .revoke_token(id_or_name, chrono::Utc::now().timestamp_millis())
            .await?;
        for t in &revoked {
            self.audited(AuditAction::TokenRevoked, &t.id, json!({ "name": t.name }))
                .await?;
        }
        Ok(revoked)
    }
}

/// A browser session just opened from a sign-in link.
pub struct NewSession {
    pub user: UserRow,
    /// The cookie's value (stored only as a digest).
    pub secret: String,
    pub max_age_seconds: i64,
}

impl Access {
    /// Adds a person who signs in in the browser.
    pub async fn create_user(
        &self,
        name: &str,
        permissions: Permissions,
    ) -> Result<UserRow, StoreError> {
        let row = UserRow {
            id: uuid::Uuid::new_v4().simple().to_string(),
            name: name.to_string(),
            permissions: permissions.to_list_string(),
            created_at_ms: self.now_ms(),
        };
        self.store.insert_user(&row).await?;
        self.audited(
            AuditAction::PersonAdded,
            &row.id,
            json!({ "name": row.name, "permissions": row.permissions }),
        )
        .await?;
        Ok(row)
    }

    /// Audits `action` on the person `changed` names, when one did.
    async fn person_changed(
        &self,
        action: AuditAction,
        changed: Result<Option<UserRow>, StoreError>,
    ) -> Result<Option<UserRow>, StoreError> {
        if let Some(u) = changed.as_ref().ok().and_then(Option::as_ref) {
            self.audited(
                action,
                &u.id,
                json!({ "name": u.name, "permissions": u.permissions }),
            )
            .await?;
        }
        changed
    }

    /// Everyone, with their live sessions counted.
    pub async fn list_people(&self) -> Result<Vec<PersonRow>, StoreError> {
        self.store.list_people(self.now_ms()).await
    }

    /// Disables a person: their sessions end at once (open event streams
    /// close within [`crate::http::STREAM_RECHECK`]) and they cannot sign
    /// in until enabled again.
    pub async fn disable_user(&self, id_or_name: &str) -> Result<Option<UserRow>, StoreError> {
        let changed = self
            .store
            .set_user_disabled(id_or_name, Some(self.now_ms()))
            .await;
        self.person_changed(AuditAction::PersonDisabled, changed)
            .await
    }

    pub async fn enable_user(&self, id_or_name: &str) -> Result<Option<UserRow>, StoreError> {
        let changed = self.store.set_user_disabled(id_or_name, None).await;
        self.person_changed(AuditAction::PersonEnabled, changed)
            .await
    }

    /// Removes a person; their sessions end at once.
    pub async fn remove_user(&self, id_or_name: &str) -> Result<Option<UserRow>, StoreError> {
        let changed = self.store.remove_user(id_or_name).await;
        self.person_changed(AuditAction::PersonRemoved, changed)
            .await
    }

    /// Changes a person's permissions with `change` (their sessions carry
    /// the new ones from the next request: every check reads them).
    pub async fn change_permissions(
        &self,
        id_or_name: &str,
        change: impl FnOnce(Permissions) -> Permissions,
    ) -> Result<Option<UserRow>, StoreError> {
        let people = self.store.list_people(self.now_ms()).await?;
        let Some(person) = people
            .iter()
            .find(|p| p.user.id == id_or_name || p.user.name == id_or_name)
        else {
            return Ok(None);
        };
        let now = change(Permissions::from_stored(&person.user.permissions));
        let changed = self
            .store
            .set_user_permissions(&person.user.id, &now.to_list_string())
            .await;
        self.person_changed(AuditAction::PersonPermissions, changed)
            .await
    }

    pub async fn user_named(&self, name: &str) -> Result<Option<UserRow>, StoreError> {
        self.store.user_named(name).await
    }

    /// A one-time sign-in link's path (`/sign-in?code=…`) for `user`.
    pub async fn sign_in_path(&self, user: &UserRow) -> Result<String, StoreError> {
        let code = secret::generate("");
        let expires = self.now_ms() + SIGN_IN_LINK_HOURS * 3_600_000;
        self.store
            .insert_sign_in_link(&secret::digest(&code), &user.id, expires)
            .await?;
        Ok(format!("/sign-in?code={code}"))
    }

    /// On a first start (nobody to sign in yet), creates the `admin` user
    /// and answers its sign-in path; otherwise `None`.
    pub async fn first_start(&self) -> Result<Option<String>, StoreError> {
        if self.no_auth || self.store.count_users().await? > 0 {
            return Ok(None);
        }
        let admin = match self.create_user("admin", Permissions::admin()).await {
            Ok(u) => u,
            // Another instance on the same database was first.
            Err(StoreError::AlreadyExists) => return Ok(None),
            Err(e) => return Err(e),
        };
        self.sign_in_path(&admin).await.map(Some)
    }

    /// Uses up a sign-in link and opens a session; `None` when the link is
    /// unknown, used or expired.
    pub async fn redeem(&self, code: &str) -> Result<Option<NewSession>, StoreError> {
        let now = self.now_ms();
        let Some(user) = self
            .store
            .take_sign_in_link(&secret::digest(code), now)
            .await?
        else {
            return Ok(None);
        };
        let session = secret::generate("");
        let max_age_seconds = SESSION_DAYS * 86_400;
        self.store
            .insert_session(
                &secret::digest(&session),
                &user.id,
                now,
                now + max_age_seconds * 1000,
            )
            .await?;
        Ok(Some(NewSession {
            user,
            secret: session,
            max_age_seconds,
        }))
    }

    /// Ends the session whose cookie `headers` carry.
    pub async fn sign_out(&self, headers: &HeaderMap) -> Result<(), StoreError> {
        if let Some(session) = cookie(headers, SESSION_COOKIE) {
            self.store.delete_session(&secret::digest(session)).await?;
        }
        Ok(())
    }
}

/// A cookie's value from the `Cookie` headers.
/// The secret of an `Authorization` header: `None` without the header,
/// `Some(None)` when it is not `Bearer <token>`.
fn bearer(headers: &HeaderMap) -> Option<Option<&str>> {
    let value = headers.get(axum::http::header::AUTHORIZATION)?;
    Some(
        value
            .to_str()
            .ok()
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim),
    )
}

/// What the live token read by `digest` (`row`) makes of a request.
fn token_credential(row: Option<TokenRow>, digest: &str) -> Credential {
    match row {
        // The lookup is by digest; comparing the digests again in constant
        // time keeps the decision itself free of timing differences.
        Some(row) if secret::same(&row.secret_hash, digest) => Credential::Valid(Principal {
            id: row.id,
            name: row.name,
            permissions: Permissions::from_stored(&row.permissions),
            via: Via::Token,
        }),
        _ => Credential::Invalid("API token"),
    }
}

pub fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(axum::http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
        .filter(|v| !v.is_empty())
}
