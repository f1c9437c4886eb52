-- 0020 cut private key blocks out of stored trust anchors, but only blocks whose boundary lines
-- start a line in capitals: the ones OpenSSL reads. A key block indented (spaces, tabs) or with
-- lower-case boundaries is skipped by OpenSSL as text between blocks, so it passed the check that
-- anchors hold certificates only, and was stored and shown in GET /v1/policy and every version.
-- Saving now refuses such text; this cuts what was saved before, whatever the case, wherever the
-- line starts (its indentation stays, which PEM readers skip). As in 0020, the first quantifier is
-- lazy, and `[^"]` keeps a match inside one JSON string.
UPDATE policies
SET document = regexp_replace(
    document::text, '-----begin ([a-z0-9 ]*?)private key-----[^"]*?-----end \1private key-----', '', 'gi'
)::jsonb
WHERE document::text ILIKE '%private key-----%';

UPDATE policy_versions
SET document = regexp_replace(
    document::text, '-----begin ([a-z0-9 ]*?)private key-----[^"]*?-----end \1private key-----', '', 'gi'
)::jsonb
WHERE document::text ILIKE '%private key-----%';
