-- 006: agent specs, sessions and the skill event log — everything that reads a skill.

-- Versioned agent configuration. enabled_skills holds skill refs ("name" floats to the newest
-- ACTIVE revision at session open, "name@rev" pins). A rollback is a new version with a pin.
CREATE TABLE agent_specs (
  tenant_id       text NOT NULL CHECK (tenant_id ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
  agent_id        text NOT NULL CHECK (char_length(agent_id) BETWEEN 1 AND 128),
  version         integer NOT NULL CHECK (version >= 1),
  enabled_skills  jsonb NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, agent_id, version)
);

-- One row per opened session: what its catalog was built from (pins, in catalog order), the
-- rendered catalog itself, the entries the caps dropped, the MCP prompts as they arrived
-- (session-scoped read-only skills, never skill revisions) and the bodies currently loaded.
-- Everything but `loaded` and `loaded_version` is fixed at open.
CREATE TABLE sessions (
  tenant_id           text NOT NULL CHECK (tenant_id ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
  id                  uuid NOT NULL DEFAULT gen_random_uuid(),
  agent_id            text NOT NULL,
  agent_spec_version  integer NOT NULL,
  tools               jsonb NOT NULL,
  pins                jsonb NOT NULL,
  catalog             text NOT NULL,
  catalog_sha256      text NOT NULL CHECK (catalog_sha256 ~ '^[0-9a-f]{64}$'),
  dropped             jsonb NOT NULL,
  mcp_prompts         jsonb NOT NULL,
  loaded              jsonb NOT NULL DEFAULT '[]'::jsonb,
  -- Compare-and-swap counter for `loaded`: two concurrent loads cannot both take the last slot.
  loaded_version      integer NOT NULL DEFAULT 0,
  created_at          timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, agent_id, agent_spec_version) REFERENCES agent_specs (tenant_id, agent_id, version)
);

-- Session events (session.created with the dropped entries, skill.load, skill.unload,
-- skill.load.denied with its reason) go to skill_events, created by 005_authoring.sql.

-- Pins resolve by (tenant, name, revision) whatever the status — session loads, replay and
-- recall's pinned lookups. The partial index of 001 covers active rows only; without this one
-- each pinned lookup scans every revision of the tenant (measured: recall p50 80 ms → see
-- bench/recall.bench.ts at 10k procedures).
CREATE UNIQUE INDEX skill_revisions_tenant_name_revision ON skill_revisions (tenant_id, name, revision);
