-- 005: governed skill authoring — skill_manage's idempotency record, SKILL_AUTHORING approvals
-- carrying a diff, and skill_events (denials by reason, conflicts, approvals, loads).

-- One row per skill_manage invocation that took effect (installed, archived, or raised an
-- approval). The key is (invocation id, canonical argument sha256): a retry with the same
-- arguments replays `result`; the same invocation id with other arguments is refused.
CREATE TABLE skill_manage_invocations (
  tenant_id        text NOT NULL CHECK (tenant_id ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
  invocation_id    text NOT NULL,
  argument_sha256  text NOT NULL CHECK (argument_sha256 ~ '^[0-9a-f]{64}$'),
  operation        text NOT NULL CHECK (operation IN ('create', 'edit', 'patch', 'archive')),
  skill_name       text NOT NULL,
  result           jsonb NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, invocation_id)
);

-- A pending skill write that the policy profile holds for a human. The package it would
-- install is stored whole (the deterministic archive), with the unified diff of SKILL.md
-- against the current revision and the member-list changes a reviewer reads.
CREATE TABLE approvals (
  tenant_id                  text NOT NULL CHECK (tenant_id ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
  id                         uuid NOT NULL DEFAULT gen_random_uuid(),
  kind                       text NOT NULL CHECK (kind IN ('SKILL_AUTHORING')),
  status                     text NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'expired', 'conflicted')),
  operation                  text NOT NULL CHECK (operation IN ('create', 'edit', 'patch')),
  skill_name                 text NOT NULL,
  -- The revision the write was proposed against (0 for a create).
  current_revision           integer NOT NULL CHECK (current_revision >= 0),
  proposed_revision          integer NOT NULL CHECK (proposed_revision >= 1),
  package_archive            bytea NOT NULL,
  package_sha256             text NOT NULL CHECK (package_sha256 ~ '^[0-9a-f]{64}$'),
  diff                       text NOT NULL,
  -- {"added": [...], "removed": [...], "changed": [...], "unchanged": [...]}
  member_changes             jsonb NOT NULL,
  requested_by_principal_id  text NOT NULL,
  requested_by_run_id        text NOT NULL,
  tool_invocation_id         text NOT NULL,
  idempotency_key            text NOT NULL,
  created_at                 timestamptz NOT NULL DEFAULT now(),
  resolved_at                timestamptz NULL,
  resolved_by                text NULL,
  resolution_reason          text NULL,
  installed_revision         integer NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, tool_invocation_id),
  CHECK ((status = 'pending') = (resolved_at IS NULL)),
  CHECK ((status = 'approved') = (installed_revision IS NOT NULL))
);
CREATE INDEX approvals_tenant_status ON approvals (tenant_id, status, created_at);

-- Generic skill events: authoring.* (denied with a reason, conflict, created/edited/patched/
-- archived), approval.* (requested, resolved), and skill.load and friends from sessions.
CREATE TABLE skill_events (
  tenant_id      text NOT NULL CHECK (tenant_id ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
  id             bigint GENERATED ALWAYS AS IDENTITY,
  session_id     text NULL,
  run_id         text NULL,
  invocation_id  text NULL,
  kind           text NOT NULL CHECK (kind ~ '^[a-z_]+(\.[a-z_]+)+$'),
  name           text NULL,
  revision       integer NULL,
  reason         text NULL,
  detail         jsonb NOT NULL DEFAULT '{}'::jsonb,
  at             timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX skill_events_tenant_kind ON skill_events (tenant_id, kind, at);
CREATE INDEX skill_events_tenant_run ON skill_events (tenant_id, run_id) WHERE run_id IS NOT NULL;
