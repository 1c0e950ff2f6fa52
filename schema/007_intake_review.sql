-- 007: the track record that reviews keep, and the reviews themselves.

-- What each procedure did after it was learned: one observation per (run, procedure), so a
-- retried or replayed review never counts a run twice.
CREATE TABLE procedure_observations (
  tenant_id     text NOT NULL,
  run_id        text NOT NULL,
  procedure_id  uuid NOT NULL REFERENCES procedures (id),
  success       boolean NOT NULL,
  -- pinned: the run had the skill pinned; recalled: recall returns it for the run's goal.
  via           text NOT NULL CHECK (via IN ('pinned', 'recalled')),
  observed_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, run_id, procedure_id)
);

-- Attempts observed by reviews since the procedure was learned: the window in which a policy
-- that starts failing is disabled (success rate < minSuccessRate over ≥ minOccurrences of them).
ALTER TABLE procedures ADD COLUMN observed_attempts integer NOT NULL DEFAULT 0;
ALTER TABLE procedures ADD COLUMN observed_successes integer NOT NULL DEFAULT 0;

-- One row per background review (workflow review/<tenant>/<runId>): started at most once per
-- run, and a failure is recorded exactly once, here and in the log.
CREATE TABLE reviews (
  tenant_id    text NOT NULL CHECK (tenant_id ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
  run_id       text NOT NULL,
  status       text NOT NULL CHECK (status IN ('running', 'completed', 'failed')),
  -- none | create | patch | skipped (review off, or the run was not completed)
  decision     text,
  detail       jsonb NOT NULL DEFAULT '{}'::jsonb,
  error        text,
  started_at   timestamptz NOT NULL DEFAULT now(),
  finished_at  timestamptz,
  PRIMARY KEY (tenant_id, run_id)
);
