-- Several servers may share one database (PostgreSQL): a server claims the
-- due schedules it is about to fire until `claimed_until` (UTC ms), in the
-- same statement that finds them, so no two servers fire one schedule at
-- once and a crashed server's claims simply run out for the others to
-- take. NULL: nobody holds it. The route's generation still fences every
-- firing, so a claim that ran out while its holder was slow costs a
-- wasted attempt, never a second dispatch.
ALTER TABLE schedules ADD COLUMN claimed_until BIGINT;
