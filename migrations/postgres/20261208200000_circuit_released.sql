-- Failback: after a probe closes a circuit, routes that moved off its
-- resource return to it at their next invocation a few at a time (the
-- release pace circuits use for their waiters). `released` counts the
-- routes that returned since the circuit closed; an opening resets it.
ALTER TABLE circuits ADD COLUMN released BIGINT NOT NULL DEFAULT 0;
