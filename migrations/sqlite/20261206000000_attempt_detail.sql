-- What an attempt row says beyond its columns, as one JSON object: why a
-- failure was unsafe to recover from automatically (`unsafe_reason`),
-- the shared circuit whose hold outlasted the policy's bound (`held_by`),
-- and for a `late_effect` row the kind of the effect that came late.
-- Rows stored before it have none.
ALTER TABLE attempts ADD COLUMN detail TEXT;
