-- Hosts compare folded (ProtectionSpace.foldedHost): without a fully qualified name's trailing
-- dot (challenges for `www.example.com.` are decided as for `www.example.com`), and an IPv6
-- address in brackets (`::1` is `[::1]`). A credential saved unfolded before would then fit no
-- challenge at all, so its host is folded here too. Where the tenant already holds a twin saved
-- folded, the unique keychain key keeps the two apart: that row stays as it is (it fits nothing
-- now) and stays listed for an admin to delete.
DO $$
DECLARE
    unfolded record;
BEGIN
    FOR unfolded IN SELECT id FROM credentials WHERE host LIKE '_%.' OR (host LIKE '%:%' AND host NOT LIKE '[%') LOOP
        BEGIN
            UPDATE credentials
            SET host = CASE WHEN host LIKE '%:%' AND host NOT LIKE '[%' THEN '[' || host || ']' ELSE left(host, -1) END
            WHERE id = unfolded.id;
        EXCEPTION WHEN unique_violation THEN
            NULL;
        END;
    END LOOP;
END
$$;
