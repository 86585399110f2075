-- Who opened each route (issue 37): the token's or the person's id.
-- Reports (failures, effects, success), dispatch claims and
-- acknowledgements for a route need that principal or the `routes:any`
-- permission; anyone else is told the route does not exist. The row is
-- written in the transaction that inserts the route, so a route never
-- exists without its opener. Kept as long as the route is.
CREATE TABLE route_openers (
    route_id TEXT PRIMARY KEY,
    opener   TEXT NOT NULL
);
-- Claims without a route id look up the caller's own routes.
CREATE INDEX route_openers_opener ON route_openers (opener, route_id);

-- Routes opened before openers were recorded keep working for every
-- caller that may submit evidence (`*`): their adapters are running now,
-- and there is no way to tell who opened them.
INSERT INTO route_openers (route_id, opener) SELECT id, '*' FROM routes;
