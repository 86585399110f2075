-- The unknown log grows the catalogue: each entry keeps the sanitised
-- skeleton of its latest sighting (JSON: item kinds, HTTP statuses and
-- header names, ACP codes, exits, agent, provider, model, phase and a
-- bounded sanitised excerpt per item; never header values or raw text) and
-- the agent that printed it. Entries logged before have neither.
ALTER TABLE unknown_evidence ADD COLUMN agent TEXT;
ALTER TABLE unknown_evidence ADD COLUMN skeleton TEXT;

-- The route attempts an entry was seen in, the latest few per entry
-- (bounded on write); removed with their entry when the log evicts it.
-- Attempts of routes retention pruned are left out when read.
CREATE TABLE unknown_sightings (
    key         TEXT NOT NULL,
    route_id    TEXT NOT NULL,
    attempt_seq BIGINT NOT NULL,
    seen_at     BIGINT NOT NULL,
    PRIMARY KEY (key, route_id, attempt_seq)
);
CREATE INDEX unknown_sightings_seen ON unknown_sightings (key, seen_at);
