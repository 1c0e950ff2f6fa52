-- 009: recall finds a procedure by what it is for — the goals it was learned from and its
-- when_to_use — instead of one embedding of a one-example description.

-- Several vectors per procedure and model: one per successful run it counted (the run's goal,
-- copied from goal_embeddings) and one for its when_to_use. Written at install time, in the same
-- transaction as the procedure row; a procedure's liveness (enabled, superseded_by) stays on
-- `procedures` and recall joins it. The HNSW index is per dimension and built by the repository
-- (the column is dimensionless, like goal_embeddings); full-text match uses the GIN index below.
CREATE TABLE procedure_goal_vectors (
  tenant_id     text NOT NULL,
  procedure_id  uuid NOT NULL REFERENCES procedures (id),
  -- 'run:<run id>' for a learned-from goal, 'when_to_use' for the description.
  source        text NOT NULL CHECK (source = 'when_to_use' OR source LIKE 'run:%'),
  model_id      text NOT NULL,
  dimension     integer NOT NULL CHECK (dimension BETWEEN 1 AND 16000),
  text          text NOT NULL,
  embedding     vector NOT NULL,
  search        tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, text)) STORED,
  PRIMARY KEY (tenant_id, procedure_id, model_id, source),
  CHECK (vector_dims(embedding) = dimension)
);
CREATE INDEX procedure_goal_vectors_search ON procedure_goal_vectors USING gin (search);

-- Procedures learned before this table existed: the goals of the successful runs they counted, in
-- every model those goals were embedded with, and their when_to_use embedding (stored for the
-- document task, which models without task prefixes embed identically; the next install of the
-- procedure, or `skillsmith reembed`, stores it for the goal task).
INSERT INTO procedure_goal_vectors (tenant_id, procedure_id, source, model_id, dimension, text, embedding)
SELECT pr.tenant_id, pr.procedure_id, 'run:' || pr.run_id, g.model_id, g.dimension, r.goal, g.embedding
  FROM procedure_runs pr
  JOIN runs r ON r.tenant_id = pr.tenant_id AND r.run_id = pr.run_id
  JOIN goal_embeddings g ON g.tenant_id = pr.tenant_id AND g.run_id = pr.run_id
 WHERE pr.success
ON CONFLICT DO NOTHING;

INSERT INTO procedure_goal_vectors (tenant_id, procedure_id, source, model_id, dimension, text, embedding)
SELECT tenant_id, id, 'when_to_use', embedding_model, embedding_dimension, when_to_use, embedding
  FROM procedures
ON CONFLICT DO NOTHING;
