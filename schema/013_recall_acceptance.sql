-- 013: each procedure's own recall acceptance (src/recall/recall-acceptance.ts): the loosest
-- leave-one-out nearest-neighbour cosine among the goals it was learned from, in the model of its
-- recall vectors. Recall returns the procedure only when the goal's best cosine reaches this less
-- the configured slack (and the global recall threshold). Written at install and by `skillsmith
-- reembed`; NULL (fewer than two distinct goals, or a procedure installed before this migration
-- until its next install or reembed) leaves only the global threshold.
ALTER TABLE procedures ADD COLUMN IF NOT EXISTS recall_loosest real;
