-- Shared resource circuits: one row per provider, account, model or
-- profile that has failed for someone (see server/src/circuits). A row is
-- written in the same transaction as the route change that caused it,
-- fenced by `version` (compare-and-swap), so two routes can never both
-- take the one probe. Times are UTC ms.
CREATE TABLE circuits (
    scope        TEXT NOT NULL,
    resource     TEXT NOT NULL,
    -- closed | open | probing
    state        TEXT NOT NULL,
    -- open: candidates on it are ineligible until then
    open_until   BIGINT,
    -- probing: the route whose attempt is the probe, and its lease
    probe_holder TEXT,
    probe_until  BIGINT,
    -- the route whose failure opened it (its own retries are the probe)
    owner        TEXT,
    openings     BIGINT NOT NULL,
    code         TEXT NOT NULL,
    changed_at   BIGINT NOT NULL,
    version      BIGINT NOT NULL,
    PRIMARY KEY (scope, resource)
);

-- Every circuit change, in order: what happened, which route caused it,
-- and the circuit after it (JSON).
CREATE TABLE circuit_events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    scope       TEXT NOT NULL,
    resource    TEXT NOT NULL,
    kind        TEXT NOT NULL,
    route_id    TEXT NOT NULL,
    payload     TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);
CREATE INDEX circuit_events_key ON circuit_events (scope, resource, id);

-- A schedule held back by a circuit names it (`provider:anthropic`), so
-- the circuit's waiters can be counted, and released when it closes.
ALTER TABLE schedules ADD COLUMN circuit TEXT;
CREATE INDEX schedules_circuit ON schedules (circuit, state);
