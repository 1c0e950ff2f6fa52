-- 004: the synthesis pass's records — one row per pass, its clusters, and the procedures
-- (the 000 spec's learned-skill record: the track record beside the skill's revisions).

-- One row per synthesis pass; `id` is its Temporal workflow id (synthesis/<tenant>/<iso-time>).
CREATE TABLE passes (
  tenant_id        text NOT NULL CHECK (tenant_id ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
  id               text NOT NULL,
  workflow_run_id  text,
  status           text NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'skipped', 'cancelled')),
  -- Why a pass ended as it did, e.g. "skipped: llm unavailable".
  outcome          text,
  full_pass        boolean NOT NULL DEFAULT false,
  since            timestamptz,
  distiller        text NOT NULL,
  -- runsSeen, sequences, clusters, qualifying, added, updated, noop, superseded, skipped
  counts           jsonb NOT NULL DEFAULT '{}'::jsonb,
  started_at       timestamptz NOT NULL DEFAULT now(),
  finished_at      timestamptz,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX passes_tenant_started ON passes (tenant_id, started_at DESC);

-- The clusters a pass found: which runs, how they fared, and what became of each.
CREATE TABLE pass_clusters (
  tenant_id      text NOT NULL,
  pass_id        text NOT NULL,
  cluster_key    text NOT NULL,
  rank           integer,
  run_ids        jsonb NOT NULL,
  -- The successful sequences among run_ids: a learned skill's provenance.
  successful_run_ids jsonb NOT NULL,
  size           integer NOT NULL,
  successful     integer NOT NULL,
  success_rate   double precision NOT NULL,
  qualifying     boolean NOT NULL,
  reason         text,
  -- pending → distilled → installed | skipped
  status         text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'distilled', 'installed', 'skipped')),
  candidate      text,
  -- The consensus tool sequence the candidate was distilled from.
  tool_sequence  jsonb,
  decision       text CHECK (decision IN ('add', 'update', 'noop', 'supersede')),
  skill_name     text,
  revision       integer,
  skip_reason    text,
  PRIMARY KEY (tenant_id, pass_id, cluster_key),
  FOREIGN KEY (tenant_id, pass_id) REFERENCES passes (tenant_id, id) ON DELETE CASCADE
);

-- One per learned skill. Revisions hold the content; this row holds the track record.
-- The embedding is over when_to_use, for recall; its dimension follows the embedding model
-- and is recorded, and the HNSW index is built per dimension by the repository.
CREATE TABLE procedures (
  id                   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  tenant_id            text NOT NULL CHECK (tenant_id ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
  skill_id             uuid NOT NULL,
  name                 text NOT NULL,
  revision             integer NOT NULL,
  when_to_use          text NOT NULL,
  tool_sequence        jsonb NOT NULL,
  tools_required       jsonb NOT NULL,
  success_count        integer NOT NULL DEFAULT 0 CHECK (success_count >= 0),
  attempt_count        integer NOT NULL DEFAULT 0 CHECK (attempt_count >= success_count),
  -- {"source": "synthesized", "from_sessions": [...]}: every id verified against runs at synthesis time.
  provenance           jsonb NOT NULL,
  enabled              boolean NOT NULL DEFAULT true,
  superseded_by        uuid REFERENCES procedures (id),
  embedding            vector NOT NULL,
  embedding_model      text NOT NULL,
  embedding_dimension  integer NOT NULL CHECK (embedding_dimension > 0),
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now(),
  last_used_at         timestamptz,
  UNIQUE (tenant_id, skill_id),
  UNIQUE (tenant_id, name),
  FOREIGN KEY (tenant_id, skill_id) REFERENCES skills (tenant_id, id)
);
CREATE INDEX procedures_tenant_recallable ON procedures (tenant_id) WHERE enabled AND superseded_by IS NULL;
