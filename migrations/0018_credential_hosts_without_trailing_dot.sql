-- Hosts compare without a fully qualified name's trailing dot (ProtectionSpace.foldedHost):
-- challenges for `www.example.com.` are decided as for `www.example.com`. A credential saved with
-- the dot before would then fit no challenge at all, so its host loses the dot here too. Where
-- the tenant already holds a twin saved without the dot, the unique keychain key keeps the two
-- apart: that row keeps its dot (it fits nothing now) and stays listed for an admin to delete.
DO $$
DECLARE
    dotted record;
BEGIN
    FOR dotted IN SELECT id FROM credentials WHERE host LIKE '_%.' LOOP
        BEGIN
            UPDATE credentials SET host = left(host, -1) WHERE id = dotted.id;
        EXCEPTION WHEN unique_violation THEN
            NULL;
        END;
    END LOOP;
END
$$;
