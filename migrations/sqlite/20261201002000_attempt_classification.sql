-- The whole classification with each attempt, as SPEC.md's data model
-- lists it (code, class, catalogue version, confidence, scope, rule,
-- provider and model ids, phase, occurred_at, retry_after / reset_at, safe
-- excerpt): the JSON the failure report answered, kept so history never
-- depends on today's catalogue. Attempts recorded before this have none.
ALTER TABLE attempts ADD COLUMN classification TEXT;
