-- Dynamic profiles. The candidate list with each candidate's policy document
-- is one JSON document, so a profile is always read and written whole, and
-- `revision` fences concurrent edits (optimistic concurrency).
-- Times are UTC milliseconds since the epoch in every engine, so comparisons
-- behave the same on SQLite and PostgreSQL.
CREATE TABLE profiles (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    revision    BIGINT NOT NULL,
    document    TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);

-- Small key/value facts about this installation (e.g. that the example
-- profile was seeded, so deleting it does not bring it back).
CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
