-- 001: skills — identity, immutable revisions, and the package archives they point at.
-- The first migration also enables pgvector for the tables that follow.
CREATE EXTENSION IF NOT EXISTS vector;

-- A skill's identity within a tenant. `source` lives here, not on revisions: a skill's source
-- never changes. `latest_revision` is the last revision number handed out (0 before the
-- first install); numbers are assigned under a row lock on this table and never reused.
CREATE TABLE skills (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id        text NOT NULL CHECK (tenant_id ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
  name             text NOT NULL,
  source           text NOT NULL CHECK (source IN ('builtin', 'operator', 'agent', 'mcp')),
  latest_revision  integer NOT NULL DEFAULT 0 CHECK (latest_revision >= 0),
  created_at       timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tenant_id, name),
  UNIQUE (tenant_id, id)
);

-- Package archives (deterministic tar+gzip), by derived key skills/{tenant}/{skill_id}/{revision}.
-- Nothing sweeps this table: a pinned revision must resolve forever.
CREATE TABLE skill_packages (
  tenant_id       text NOT NULL,
  key             text NOT NULL,
  skill_id        uuid NOT NULL,
  revision        integer NOT NULL CHECK (revision >= 1),
  bytes           bytea NOT NULL,
  content_sha256  text NOT NULL CHECK (content_sha256 ~ '^[0-9a-f]{64}$'),
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, key),
  UNIQUE (tenant_id, skill_id, revision),
  FOREIGN KEY (tenant_id, skill_id) REFERENCES skills (tenant_id, id)
);

-- One row per installed package. Immutable after insert except for archiving, which changes
-- only status, archived_by_invocation_id and archive_idempotency_key.
CREATE TABLE skill_revisions (
  id                         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id                  text NOT NULL,
  skill_id                   uuid NOT NULL,
  name                       text NOT NULL,
  revision                   integer NOT NULL CHECK (revision >= 1),
  version                    text NOT NULL,
  description                text NOT NULL,
  required_tools             jsonb NOT NULL,
  license                    text NOT NULL,
  manifest                   jsonb NOT NULL,
  body                       text NOT NULL,
  body_tokens                integer NOT NULL,
  content_sha256             text NOT NULL CHECK (content_sha256 ~ '^[0-9a-f]{64}$'),
  package_key                text NOT NULL,
  package_bytes              bigint NOT NULL,
  file_count                 integer NOT NULL,
  trust                      text NOT NULL CHECK (trust IN ('trusted_configuration', 'external_untrusted')),
  status                     text NOT NULL CHECK (status IN ('active', 'archived')),
  authored_by_run_id         text NULL,
  authored_by_principal_id   text NULL,
  authored_by_invocation_id  text NULL,
  authoring_idempotency_key  text NULL,
  archived_by_invocation_id  text NULL,
  archive_idempotency_key    text NULL,
  created_at                 timestamptz NOT NULL DEFAULT now(),
  UNIQUE (skill_id, revision),
  FOREIGN KEY (tenant_id, skill_id) REFERENCES skills (tenant_id, id),
  FOREIGN KEY (tenant_id, package_key) REFERENCES skill_packages (tenant_id, key),
  -- Provenance is all-or-nothing at creation (only authored_by_run_id may later be erased).
  CHECK (
    (authored_by_principal_id IS NULL AND authored_by_invocation_id IS NULL AND authoring_idempotency_key IS NULL
      AND authored_by_run_id IS NULL)
    OR (authored_by_principal_id IS NOT NULL AND authored_by_invocation_id IS NOT NULL
      AND authoring_idempotency_key IS NOT NULL)
  )
);

CREATE UNIQUE INDEX skill_revisions_authored_by_invocation
  ON skill_revisions (tenant_id, authored_by_invocation_id)
  WHERE authored_by_invocation_id IS NOT NULL;

CREATE UNIQUE INDEX skill_revisions_archived_by_invocation
  ON skill_revisions (tenant_id, archived_by_invocation_id)
  WHERE archived_by_invocation_id IS NOT NULL;

CREATE INDEX skill_revisions_active ON skill_revisions (tenant_id, name, revision DESC) WHERE status = 'active';
