-- The writer's set-based batches commit without waiting for the log to be
-- flushed (so the event-order lock is not held through the flush), and
-- their answers wait for a flush made by updating this table: one row per
-- database session that has done so (`pg_backend_pid()`), so concurrent
-- servers never wait on each other's row. A transaction that writes
-- nothing to the log commits without a flush; this one writes.
CREATE TABLE flush_barriers (
    backend INTEGER PRIMARY KEY,
    n BIGINT NOT NULL
);
