-- Webhooks (issue 42, part 4): subscriptions and their deliveries.
--
-- A subscription keeps the last route event (`events.id`) and circuit
-- event (`circuit_events.id`) it has turned into deliveries; moving them
-- and inserting the deliveries is one transaction. `events` is a
-- comma-separated list of domain::webhook::WebhookEvent names. `secret`
-- signs deliveries, so it is kept as given (never answered by the API).
-- `lease_until` is set while a server delivers its oldest pending
-- delivery: one at a time per subscription. Times are UTC ms.
CREATE TABLE webhooks (
    id              TEXT PRIMARY KEY,
    url             TEXT NOT NULL,
    events          TEXT NOT NULL,
    secret          TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    route_cursor    BIGINT NOT NULL,
    circuit_cursor  BIGINT NOT NULL,
    lease_until     BIGINT
);

-- Deliveries, sent in `seq` order per subscription. `state`: pending,
-- delivered or failed; `body` is the JSON posted, exactly as signed.
CREATE TABLE webhook_deliveries (
    seq          BIGSERIAL PRIMARY KEY,
    id           TEXT NOT NULL UNIQUE,
    webhook_id   TEXT NOT NULL,
    event        TEXT NOT NULL,
    body         TEXT NOT NULL,
    state        TEXT NOT NULL,
    attempts     BIGINT NOT NULL,
    next_at      BIGINT NOT NULL,
    last_status  BIGINT,
    last_error   TEXT,
    created_at   BIGINT NOT NULL
);
CREATE INDEX webhook_deliveries_queue ON webhook_deliveries (webhook_id, state, seq);
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (state, created_at);
