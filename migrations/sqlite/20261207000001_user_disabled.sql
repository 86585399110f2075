-- People can be disabled (issue 37): a disabled person's sessions are
-- ended and none is opened or accepted until they are enabled again.
-- UTC ms; null while enabled.
ALTER TABLE users ADD COLUMN disabled_at BIGINT;
