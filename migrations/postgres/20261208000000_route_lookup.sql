-- Finding routes (issue 42): by the caller's own reference (a Kanban card,
-- a workflow run), exactly, and pages of the route list by cursor. The
-- list is newest first by creation time and id, an order no transition
-- changes, so a cursor is stable while routes are written.
CREATE INDEX routes_caller_ref ON routes (caller_ref, created_at, id);
CREATE INDEX routes_created ON routes (created_at, id);
