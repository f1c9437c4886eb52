-- Each release is continued at most once: a response that continues its attempt (the server's
-- next NTLM handshake message, or a renewed Digest nonce) first claims the release here,
-- and a second response claiming the same release, through this instance or another, is told so
-- instead of continuing the attempt again. Until now the two were told apart by counting the
-- releases recorded, which a second response read before the first one's release was recorded.
-- Instances of the previous release do not claim; they count as before.
ALTER TABLE decisions ADD COLUMN continued_at timestamptz;
