-- 003: goal embeddings — each run's goal embedded once per model and reused by every pass.
-- The vector column is unconstrained (its dimension follows the configured model); the
-- dimension is recorded per (tenant, model) in embedding_models and checked on every row,
-- so a model whose dimension differs from the stored one is refused, not mixed in.
CREATE TABLE embedding_models (
  tenant_id   text NOT NULL CHECK (tenant_id ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
  model_id    text NOT NULL CHECK (char_length(model_id) BETWEEN 1 AND 256),
  dimension   integer NOT NULL CHECK (dimension BETWEEN 1 AND 16000),
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, model_id),
  UNIQUE (tenant_id, model_id, dimension)
);

CREATE TABLE goal_embeddings (
  tenant_id   text NOT NULL,
  run_id      text NOT NULL,
  model_id    text NOT NULL,
  dimension   integer NOT NULL,
  embedding   vector NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, run_id, model_id),
  FOREIGN KEY (tenant_id, run_id) REFERENCES runs (tenant_id, run_id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, model_id, dimension) REFERENCES embedding_models (tenant_id, model_id, dimension),
  CHECK (vector_dims(embedding) = dimension)
);

-- "Runs of a tenant without an embedding for model M" is an anti-join on this key.
CREATE INDEX goal_embeddings_tenant_model ON goal_embeddings (tenant_id, model_id, run_id);
