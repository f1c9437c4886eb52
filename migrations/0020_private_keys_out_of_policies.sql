-- Trust anchors now take certificates only. Before, an anchor pasted from a combined key-and-chain
-- file was saved with its private key (the parser skipped the key's block), and the policy, stored
-- as sent, showed the key in GET /v1/policy and in every version kept for the audit. The key blocks
-- are cut out of the current policies and of their versions; the certificates beside them stay,
-- so every policy decides as before (the line break after a key stays: PEM readers skip it).
-- The first quantifier is lazy, which makes the whole expression prefer the shortest match
-- (PostgreSQL takes a regular expression's greediness from its first quantifier): one key block
-- at a time, never from one to the next. `[^"]` keeps a match inside one JSON string: PEM holds no
-- quote. Instances of the previous release read the documents as before.
UPDATE policies
SET document = regexp_replace(
    document::text, '-----BEGIN ([A-Z0-9 ]*?)PRIVATE KEY-----[^"]*?-----END \1PRIVATE KEY-----', '', 'g'
)::jsonb
WHERE document::text LIKE '%PRIVATE KEY-----%';

UPDATE policy_versions
SET document = regexp_replace(
    document::text, '-----BEGIN ([A-Z0-9 ]*?)PRIVATE KEY-----[^"]*?-----END \1PRIVATE KEY-----', '', 'g'
)::jsonb
WHERE document::text LIKE '%PRIVATE KEY-----%';
