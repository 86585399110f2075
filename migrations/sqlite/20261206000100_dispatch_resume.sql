-- A dispatch that resumes the provider session its failed attempt ran in
-- (a provider-supported resumable retry) says so: the session and the
-- provider-side generation (turn), as JSON. NULL for a plain attempt,
-- which sends the prompt again.
ALTER TABLE dispatches ADD COLUMN resume TEXT;
