-- Blocks grow by the rule's blockIncrementSeconds per earlier block, as Keycloak's wait increment
-- does: while rejections keep coming. Keycloak clears a user's failures on a successful login and
-- when an admin unlocks the user; here `blocks` never went down, so a credential blocked often
-- months ago, reset by an admin, or given a new secret was blocked for ever longer on its next
-- few rejections. `repeated_blocks` counts the blocks since the counter's last accepted outcome,
-- reset or secret change, and the schedule grows by it; `blocks` keeps counting every block for
-- the admins' view.
--
-- Counters keep the growth they have now. Instances of the previous release, while a rolling
-- upgrade replaces them, neither read nor move the new column: their blocks grow by `blocks`, as
-- before, the blocks they make do not grow those made by this release, and an accepted outcome,
-- reset or new secret they record does not start this release's schedule again (the next one
-- recorded by this release does).
ALTER TABLE rejection_counters ADD COLUMN repeated_blocks int NOT NULL DEFAULT 0;
UPDATE rejection_counters SET repeated_blocks = blocks WHERE blocks > 0;
