-- 008: reconcile by procedure, an exact track record, and no silent per-pass cap.

-- The runs a procedure's track record counts, each once however many passes saw it: the
-- successful sequences and the failed or cancelled runs that qualification counted for the
-- cluster it was learned or updated from. success_count/attempt_count grow by exactly the rows
-- an install adds here (minus runs a review already observed for the procedure).
CREATE TABLE procedure_runs (
  tenant_id     text NOT NULL,
  procedure_id  uuid NOT NULL REFERENCES procedures (id),
  run_id        text NOT NULL,
  success       boolean NOT NULL,
  pass_id       text NOT NULL,
  counted_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, procedure_id, run_id),
  FOREIGN KEY (tenant_id, run_id) REFERENCES runs (tenant_id, run_id)
);

-- Procedures learned before this table existed: their provenance runs are the successes they counted.
INSERT INTO procedure_runs (tenant_id, procedure_id, run_id, success, pass_id)
SELECT p.tenant_id, p.id, session.run_id, true, 'before-008'
  FROM procedures p
  CROSS JOIN LATERAL jsonb_array_elements_text(p.provenance -> 'from_sessions') AS session(run_id)
  JOIN runs r ON r.tenant_id = p.tenant_id AND r.run_id = session.run_id
ON CONFLICT DO NOTHING;

-- The mean goal embedding of the procedure's successful runs (the goals it was learned from), for
-- reconcile; recomputed on every install. NULL for procedures learned before it existed.
ALTER TABLE procedures ADD COLUMN goal_centroid vector;
ALTER TABLE procedures ADD COLUMN goal_centroid_model text;

-- What reconcile decided for a cluster, before distillation (a NOOP is never distilled), and why;
-- for a cluster past the pass's budget, why it waits.
ALTER TABLE pass_clusters ADD COLUMN target_procedure_id uuid REFERENCES procedures (id);
ALTER TABLE pass_clusters ADD COLUMN decision_reason text;
-- successful runs × success rate: the order in which a pass processes its qualifying clusters.
ALTER TABLE pass_clusters ADD COLUMN value double precision;
-- A qualifying cluster left pending by a completed pass is carried into the next pass, which takes it first.
ALTER TABLE pass_clusters ADD COLUMN carried_from text;
ALTER TABLE pass_clusters ADD COLUMN carried_to text;
-- pending → reconciled (decision made; a NOOP ends here) → distilled → installed | skipped
ALTER TABLE pass_clusters DROP CONSTRAINT pass_clusters_status_check;
ALTER TABLE pass_clusters ADD CONSTRAINT pass_clusters_status_check
  CHECK (status IN ('pending', 'reconciled', 'distilled', 'installed', 'skipped'));
CREATE INDEX pass_clusters_waiting ON pass_clusters (tenant_id) WHERE qualifying AND carried_to IS NULL AND status <> 'installed';
