-- Security checks (MobileFirst-style app challenges): where each client stands with each check,
-- kept centrally as a MobileFirst server keeps it for CredentialsValidationSecurityCheck.
-- Answers are decision records of kind 'securityCheck'; the credentials' own rejections are
-- ordinary rejection_counters rows under the check's protection space.

CREATE TABLE security_check_states (
    tenant_id        uuid NOT NULL REFERENCES tenants (id),
    security_check   text NOT NULL,
    client_id        text NOT NULL,
    -- What was last set; it reads 'expired' once expires_at has passed.
    state            text NOT NULL CHECK (state IN ('attempting', 'success', 'blocked')),
    -- Failed answers in the current attempting window, or those that led to the block.
    attempts         int NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    expires_at       timestamptz NOT NULL,
    total_failures   bigint NOT NULL DEFAULT 0,
    blocks           int NOT NULL DEFAULT 0,
    last_challenge_at timestamptz,
    last_failure_at  timestamptz,
    -- The server's failure message ({"failure": "..."}), cut to 200 characters.
    last_failure     text,
    last_success_at  timestamptz,
    -- The decision the last failure or success report applied to.
    last_decision_id uuid,
    updated_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, security_check, client_id),
    CONSTRAINT security_check_states_name CHECK (char_length(security_check) BETWEEN 1 AND 100)
);

CREATE INDEX security_check_states_client ON security_check_states (tenant_id, client_id, security_check);
CREATE INDEX security_check_states_recent ON security_check_states (tenant_id, updated_at DESC);

-- The last answer of a check in a session: what a failure or success report applies to.
CREATE INDEX decisions_security_check_answers ON decisions (session_id, task_id, created_at DESC)
    WHERE kind = 'securityCheck' AND disposition = 'useCredential';
