-- 011: each distinct goal text is embedded once per (tenant, model): runs repeat their goals
-- (3,499 distinct in a 10k-run bench), and a run's embedding is copied from here when its
-- normalised goal text was embedded before.
--
-- Tenant-scoped on purpose, though the same text gives the same vector for everyone: a shared
-- cache would tell one tenant, by timing, whether another ever submitted a given goal, and a
-- vector (largely invertible to its text) would outlive its tenant's data. The only price is
-- embedding a goal again per tenant that has it.
CREATE TABLE goal_text_embeddings (
  tenant_id   text NOT NULL,
  model_id    text NOT NULL,
  -- sha256 (hex) of the normalised goal text (src/embedding/goal-text.ts): what was embedded.
  text_hash   text NOT NULL CHECK (text_hash ~ '^[0-9a-f]{64}$'),
  dimension   integer NOT NULL,
  embedding   vector NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, model_id, text_hash),
  FOREIGN KEY (tenant_id, model_id, dimension) REFERENCES embedding_models (tenant_id, model_id, dimension),
  CHECK (vector_dims(embedding) = dimension)
);
