-- Idempotency keys of route creation (`POST /api/v1/routes` with an
-- `Idempotency-Key` header). The key's row is written in the transaction
-- that inserts the route, so a key names exactly one route, or none if
-- that transaction did not commit. `scope` is who sent the key (a token's
-- or a person's id): the same key from someone else is another key.
-- `request` is the creation request's canonical form, to tell a repeat
-- from the key reused for another route. Kept as long as the route is.
-- Times are UTC ms.
CREATE TABLE route_keys (
    scope      TEXT NOT NULL,
    key        TEXT NOT NULL,
    route_id   TEXT NOT NULL,
    request    TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (scope, key)
);
