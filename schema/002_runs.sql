-- 002: runs reported by agent runtimes, and their tool calls (the episodic trace that
-- synthesis extracts from). Ingestion is an idempotent upsert keyed on (tenant_id, run_id):
-- content_sha256 is the digest of the canonical run report, so a re-report with the same
-- content changes nothing and one with different content is refused.
CREATE TABLE runs (
  tenant_id        text NOT NULL CHECK (tenant_id ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
  run_id           text NOT NULL CHECK (char_length(run_id) BETWEEN 1 AND 128),
  agent_id         text NOT NULL CHECK (char_length(agent_id) BETWEEN 1 AND 128),
  session_id       text NOT NULL CHECK (char_length(session_id) BETWEEN 1 AND 128),
  -- The user's goal, stored verbatim (control characters and injected instructions are data).
  goal             text NOT NULL CHECK (char_length(goal) BETWEEN 1 AND 2000),
  status           text NOT NULL CHECK (status IN ('completed', 'failed', 'cancelled')),
  origin_trust     text NOT NULL CHECK (origin_trust IN ('operator', 'user', 'untrusted')),
  -- [{ "name", "revision", "contentSha256" }]: the skills the run had pinned.
  skill_pins       jsonb NOT NULL DEFAULT '[]'::jsonb,
  started_at       timestamptz NOT NULL,
  completed_at     timestamptz NOT NULL,
  tool_call_count  integer NOT NULL CHECK (tool_call_count BETWEEN 0 AND 500),
  content_sha256   text NOT NULL CHECK (content_sha256 ~ '^[0-9a-f]{64}$'),
  ingested_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, run_id),
  CHECK (completed_at >= started_at)
);

-- Extraction reads "runs of a tenant ingested since T" (incremental passes).
CREATE INDEX runs_tenant_ingested_at ON runs (tenant_id, ingested_at);

CREATE TABLE tool_calls (
  tenant_id       text NOT NULL,
  run_id          text NOT NULL,
  -- Position of the call within its run, from 0.
  seq             integer NOT NULL CHECK (seq BETWEEN 0 AND 499),
  tool            text NOT NULL CHECK (char_length(tool) BETWEEN 1 AND 128),
  args            jsonb,
  result_summary  text CHECK (char_length(result_summary) <= 4000),
  success         boolean NOT NULL,
  error           text,
  duration_ms     bigint CHECK (duration_ms >= 0),
  at              timestamptz,
  PRIMARY KEY (tenant_id, run_id, seq),
  FOREIGN KEY (tenant_id, run_id) REFERENCES runs (tenant_id, run_id) ON DELETE CASCADE
);
