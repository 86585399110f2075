-- Access: API tokens, people who sign in in the browser, their one-time
-- sign-in links and their sessions. Only SHA-256 digests of secrets are
-- stored (the secrets are 256 random bits, so a slow hash adds nothing):
-- a copy of the database does not let anyone in.
-- Permissions are a comma-separated list of names (`profiles:manage,…`).
-- Times are UTC milliseconds since the epoch.
CREATE TABLE api_tokens (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    secret_hash  TEXT NOT NULL UNIQUE,
    permissions  TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    -- A revoked token is kept (who had what, when) but never accepted.
    revoked_at   BIGINT
);
-- A name picks one live token (`token revoke NAME`); a revoked name can be
-- used again.
CREATE UNIQUE INDEX api_tokens_live_name ON api_tokens (name) WHERE revoked_at IS NULL;

CREATE TABLE users (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    permissions  TEXT NOT NULL,
    created_at   BIGINT NOT NULL
);

-- A sign-in link works once, until it expires.
CREATE TABLE sign_in_links (
    secret_hash  TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    expires_at   BIGINT NOT NULL
);

-- Browser sessions, kept in the database so they survive a restart.
CREATE TABLE sessions (
    secret_hash  TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);
