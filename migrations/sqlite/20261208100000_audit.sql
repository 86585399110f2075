-- Audit (issue 42, part 5): who changed what, and when.
--
-- Every committed route event names its actor: the JSON of
-- domain::audit::Actor (`{"kind":"timer"}`, `{"kind":"person","id":…,
-- "name":…}`, …); null on events written before this column existed.
ALTER TABLE events ADD COLUMN actor TEXT;

-- Every manual action, profile change, token and user change, circuit
-- release and webhook change, append-only. `actor` as on events;
-- `action` a domain::audit::AuditAction name; `subject` the id or name
-- of what changed; `detail` a JSON object (or null). Times are UTC ms.
CREATE TABLE audit_log (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    at          BIGINT NOT NULL,
    actor       TEXT NOT NULL,
    action      TEXT NOT NULL,
    subject     TEXT NOT NULL,
    detail      TEXT
);
CREATE INDEX audit_log_subject ON audit_log (subject, id);

-- Every revision a profile was saved at, whole, written in the same
-- transaction as the profile itself, so two revisions can be compared.
-- Kept after the profile is deleted (what it was matters then most).
CREATE TABLE profile_revisions (
    profile_id  TEXT NOT NULL,
    revision    BIGINT NOT NULL,
    name        TEXT NOT NULL,
    document    TEXT NOT NULL,
    actor       TEXT NOT NULL,
    at          BIGINT NOT NULL,
    PRIMARY KEY (profile_id, revision)
);
