-- The client nonce a credential first answered each Digest nonce with. A `-sess` algorithm
-- (MD5-sess, SHA-256-sess) hashes it into A1, which RFC 7616 §3.4.2 computes once per nonce, from
-- the first request's cnonce: a server that keeps the session key refused every later header
-- that brought a fresh cnonce, and so a fresh A1. Headers for a `-sess` nonce now all carry the
-- first one. Null for counts taken before this migration (the next header sets it) and by
-- instances of an earlier release, which keep sending a fresh cnonce as before.
ALTER TABLE digest_nonce_counts ADD COLUMN first_cnonce text;
