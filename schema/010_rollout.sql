-- 010: the rollout gate — paired evaluation evidence and operator overrides, per tenant and per
-- combination (model policy, policy profile, authoring implementation version). Evidence never
-- transfers between combinations, so the combination is part of every key.

-- One evaluation case run by both arms. Recording the same case again for the same combination
-- changes nothing (the primary key; a different outcome for it is refused by the recorder).
CREATE TABLE rollout_pairs (
  tenant_id                 text NOT NULL CHECK (tenant_id ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
  model_policy              text NOT NULL,
  policy_profile            text NOT NULL,
  authoring_version         text NOT NULL,
  case_id                   text NOT NULL,
  baseline_completed        boolean NOT NULL,
  authored_completed        boolean NOT NULL,
  baseline_policy_failures  integer NOT NULL CHECK (baseline_policy_failures >= 0),
  authored_policy_failures  integer NOT NULL CHECK (authored_policy_failures >= 0),
  recorded_at               timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, model_policy, policy_profile, authoring_version, case_id)
);

-- Operator decisions that activate a tenant without passing evidence (grant) or withdraw such a
-- decision (revoke): append-only, so who decided what, when and why stays visible. The latest
-- row for a tenant and combination is the one in force.
CREATE TABLE rollout_overrides (
  id                 bigserial PRIMARY KEY,
  tenant_id          text NOT NULL CHECK (tenant_id ~ '^[a-z0-9][a-z0-9_-]{0,62}$'),
  model_policy       text NOT NULL,
  policy_profile     text NOT NULL,
  authoring_version  text NOT NULL,
  action             text NOT NULL CHECK (action IN ('grant', 'revoke')),
  decided_by         text NOT NULL CHECK (length(decided_by) > 0),
  reason             text NOT NULL CHECK (length(reason) > 0),
  decided_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX rollout_overrides_combination ON rollout_overrides (tenant_id, model_policy, policy_profile, authoring_version, id);
