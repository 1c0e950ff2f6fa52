-- 014: the tenant's recall space (src/recall/recall-space.ts): a whitening of its goal vectors
-- learned from the goals of its own procedures, and the classes recall tells a goal's job by —
-- each procedure (the centroid of its learned goals) and each run of another job (one its
-- procedures neither counted nor cover). Rebuilt as a whole by every synthesis pass and by
-- `skillsmith reembed`; a tenant without one is recalled as before (the goal vectors alone).
CREATE TABLE recall_spaces (
  tenant_id   text NOT NULL,
  model_id    text NOT NULL,
  dimension   integer NOT NULL CHECK (dimension BETWEEN 1 AND 16000),
  -- Counts the rebuilds: recall asks for the classes of the version whose whitening it holds.
  version     bigint NOT NULL,
  -- float32 little-endian, dimension × dimension, row-major: the inverse Cholesky factor.
  whitening   bytea NOT NULL CHECK (octet_length(whitening) = 4 * dimension * dimension),
  pass_id     text,
  built_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, model_id)
);

CREATE TABLE recall_space_classes (
  tenant_id     text NOT NULL,
  model_id      text NOT NULL,
  version       bigint NOT NULL,
  -- 'procedure:<id>' or 'run:<run id>'.
  class_key     text NOT NULL CHECK (class_key LIKE 'procedure:%' OR class_key LIKE 'run:%'),
  procedure_id  uuid REFERENCES procedures (id),
  -- Goals behind the centroid (1 for a run).
  members       integer NOT NULL CHECK (members > 0),
  dimension     integer NOT NULL CHECK (dimension BETWEEN 1 AND 16000),
  -- The mean of the members' whitened unit vectors, and its squared length.
  centroid      vector NOT NULL,
  norm_squared  double precision NOT NULL,
  PRIMARY KEY (tenant_id, model_id, class_key),
  CHECK (vector_dims(centroid) = dimension),
  CHECK ((procedure_id IS NULL) = (class_key LIKE 'run:%'))
);
