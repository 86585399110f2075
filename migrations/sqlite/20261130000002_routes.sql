-- Recovery routes. A route is one logical dynamic session bound to a
-- profile. Every transition rewrites this row in one transaction with a
-- compare-and-swap on `generation`, together with the rows below.
-- `memory` holds per-cycle bookkeeping as JSON (excluded candidates, reset
-- waits used, retries used per candidate and class); `pending` and
-- `last_failure` hold the wire shapes of the same name. Times are UTC ms.
CREATE TABLE routes (
    id                  TEXT PRIMARY KEY,
    profile_id          TEXT NOT NULL,
    caller_kind         TEXT NOT NULL,
    caller_ref          TEXT NOT NULL,
    state               TEXT NOT NULL,
    generation          BIGINT NOT NULL,
    cycle               BIGINT NOT NULL,
    candidate_index     BIGINT NOT NULL,
    candidate_id        TEXT NOT NULL,
    candidate_label     TEXT NOT NULL,
    invocation_id       TEXT NOT NULL,
    prompt_generation   BIGINT NOT NULL,
    effects             BIGINT NOT NULL,
    provider_session_id TEXT,
    memory              TEXT NOT NULL,
    pending             TEXT,
    last_failure        TEXT,
    reason              TEXT,
    created_at          BIGINT NOT NULL,
    updated_at          BIGINT NOT NULL
);
CREATE INDEX routes_profile ON routes (profile_id, updated_at);
CREATE INDEX routes_updated ON routes (updated_at);

-- Append-only attempt history: why each decision was made, with the
-- classification, catalogue version and policy snapshot in force then.
CREATE TABLE attempts (
    route_id          TEXT NOT NULL,
    seq               BIGINT NOT NULL,
    generation        BIGINT NOT NULL,
    cycle             BIGINT NOT NULL,
    candidate_index   BIGINT NOT NULL,
    candidate_id      TEXT NOT NULL,
    candidate_label   TEXT NOT NULL,
    invocation_id     TEXT NOT NULL,
    code              TEXT NOT NULL,
    class             TEXT NOT NULL,
    catalogue_version TEXT NOT NULL,
    classifier_rule   TEXT NOT NULL,
    safe_excerpt      TEXT NOT NULL,
    http_status       BIGINT,
    policy            TEXT NOT NULL,
    decision          TEXT NOT NULL,
    retry_ordinal     BIGINT NOT NULL,
    deadline          BIGINT,
    outcome           TEXT NOT NULL,
    created_at        BIGINT NOT NULL,
    PRIMARY KEY (route_id, seq)
);

-- Durable timers: a schedule is written (armed) in the transition's
-- transaction, before any in-memory timer exists; it fires only if its
-- generation is still the route's.
CREATE TABLE schedules (
    id          TEXT PRIMARY KEY,
    route_id    TEXT NOT NULL,
    generation  BIGINT NOT NULL,
    kind        TEXT NOT NULL,
    deadline    BIGINT NOT NULL,
    state       TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);
CREATE INDEX schedules_due ON schedules (state, deadline);
CREATE INDEX schedules_route ON schedules (route_id, state);

-- Dispatches: "deliver the prompt to candidate C at generation G". Claimed
-- with a lease, then acknowledged. A claimed, unacknowledged dispatch is
-- ambiguous (it may or may not have been delivered) and is never re-offered.
CREATE TABLE dispatches (
    id                TEXT PRIMARY KEY,
    route_id          TEXT NOT NULL,
    generation        BIGINT NOT NULL,
    invocation_id     TEXT NOT NULL,
    prompt_generation BIGINT NOT NULL,
    candidate_index   BIGINT NOT NULL,
    candidate_id      TEXT NOT NULL,
    candidate_label   TEXT NOT NULL,
    caller_kind       TEXT NOT NULL,
    reason            TEXT NOT NULL,
    state             TEXT NOT NULL,
    lease_until       BIGINT,
    created_at        BIGINT NOT NULL,
    claimed_at        BIGINT,
    acked_at          BIGINT
);
CREATE INDEX dispatches_state ON dispatches (state, created_at);
CREATE INDEX dispatches_route ON dispatches (route_id, state);

-- Committed transitions, in order, for the event stream (resumable by id).
CREATE TABLE events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    route_id    TEXT NOT NULL,
    kind        TEXT NOT NULL,
    payload     TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);
