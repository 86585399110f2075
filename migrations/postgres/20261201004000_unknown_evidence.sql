-- Evidence the catalogue did not recognise (GET /api/v1/catalogue/unknown),
-- kept in the database so it survives restarts and every instance sees the
-- same log. Only the classifier's sanitised excerpt is stored, never raw
-- evidence. `key` is the excerpt with digit runs folded to `#`, so
-- `exit code 1` and `exit code 2` count as one entry. Times are UTC ms.
CREATE TABLE unknown_evidence (
    key               TEXT PRIMARY KEY,
    safe_excerpt      TEXT NOT NULL,
    count             BIGINT NOT NULL,
    first_seen        BIGINT NOT NULL,
    last_seen         BIGINT NOT NULL,
    -- fallback.unmatched, fallback.conflict or an explicit near-miss rule
    classifier_rule   TEXT NOT NULL,
    provider_id       TEXT,
    model_id          TEXT,
    catalogue_version TEXT NOT NULL
);
-- The log is bounded: when it is over capacity the entries seen longest
-- ago go first, found through this index.
CREATE INDEX unknown_evidence_last_seen ON unknown_evidence (last_seen, key);

-- How many entries the bound has dropped, ever: one row, so it is shared
-- like the log itself.
CREATE TABLE unknown_evidence_evictions (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    evicted BIGINT NOT NULL
);
INSERT INTO unknown_evidence_evictions (id, evicted) VALUES (1, 0);
