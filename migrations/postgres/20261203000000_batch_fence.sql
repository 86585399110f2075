-- A set-based batch of transitions (server/src/store/pg_batch.rs) is one
-- statement committed on its own, without BEGIN and COMMIT: one round trip
-- instead of three. When one of its routes' generations has moved, the
-- statement must fail so that nothing of it commits; this raises that
-- failure with its own SQLSTATE, so the writer tells it from any other
-- (it then commits the batch member by member, where the stale member
-- fails alone). PostgreSQL only: SQLite's writer batches differently.
CREATE FUNCTION kandev_recovery_fences_held(held BOOLEAN) RETURNS BOOLEAN
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT held THEN
        RAISE EXCEPTION USING ERRCODE = 'KR409',
            MESSAGE = 'a route''s generation moved: the batch goes member by member';
    END IF;
    RETURN TRUE;
END
$$;
