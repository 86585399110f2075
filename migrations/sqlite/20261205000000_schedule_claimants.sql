-- Who holds a schedule's claim: the claiming server's name for itself
-- (PostgreSQL: the `application_name` its connections carry). A claim
-- whose holder is gone is taken over at once rather than when it runs
-- out: on SQLite any claim not the serving process's own (one server per
-- file: it was left by a process that ended), on PostgreSQL one whose
-- holder has no connection to the server left. NULL (claims written
-- before this column, or by a store that does not know its connections'
-- name): held until `claimed_until`, as before.
ALTER TABLE schedules ADD COLUMN claimed_by TEXT;
