-- A credential whose password never leaves the service (`exportable` false): no challenge answer,
-- security-check answer, Basic header or NTLM handshake carries it; it answers Digest challenges
-- of raw responses, whose header the service computes. Instances of a release before this one do
-- not read the column and would still release the password: set it false only once every instance
-- runs this release or a later one.
ALTER TABLE credentials ADD COLUMN exportable boolean NOT NULL DEFAULT true;
