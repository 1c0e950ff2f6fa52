import type pg from 'pg';
import { z } from 'zod';
import { storableString } from '../input/storable-text.ts';
import type { Embedder } from '../embedding/embedder.ts';
import { searchRecallVectors } from '../procedures/procedure-goal-vector-repository.ts';
import { isEmbeddedDatabase, withTransaction, type Queryable } from '../store/database.ts';
import { DEFAULT_ACCEPTANCE_SLACK } from '../procedures/recall-acceptance.ts';
import type { RecallUsage } from './recall-usage.ts';
import type { QueryEmbeddings } from './query-embeddings.ts';
import type { RecallSpaces } from './recall-space-cache.ts';
import { searchRecallSpace } from './recall-space-repository.ts';
import { CENTROID_SIZE_CORRECTION, whiten } from './recall-space.ts';

/**
 * recall_skill(goal, topK = 2): the procedures whose purpose matches the goal — scored against
 * the goals each was learned from and its when_to_use, fused with full-text match by reciprocal
 * rank — only enabled and not superseded ones whose best cosine reaches the recall threshold and
 * the procedure's own acceptance (as close as its learned goals come to each other, less a slack),
 * bodies cut at 1,500 characters with an explicit marker. A method for planners, never an
 * LLM-facing tool.
 *
 * Recall abstains rather than hand out a neighbouring task's skill: when one of the tenant's runs
 * that no procedure was learned from or observed in lies nearer the goal than anything a
 * procedure is for, and that run called under half of the procedure's tools, the goal is taken
 * to be that run's job — which has no skill — and the procedure is not returned. A run that
 * followed the procedure is evidence for it, not against.
 */

export const MAX_RECALL_BODY_CHARS = 1500;
export const TRUNCATION_MARKER = '… (truncated)';

export const recallRequestSchema = z.strictObject({
  goal: storableString().trim().min(1, 'goal is empty').max(2000, 'goal is longer than 2000 characters'),
  topK: z.coerce.number().int().min(1).max(20).default(2),
});

export interface RecalledSkill {
  name: string;
  whenToUse: string;
  body: string;
  toolsRequired: string[];
  revision: number;
  /** The best cosine between the goal and what the procedure is for; results are ordered by the fused rank. */
  score: number;
}

export interface RecallDependencies {
  pool: pg.Pool;
  embedder: Embedder;
  /**
   * The recall threshold (SKILLSMITH_RECALL_THRESHOLD, or the model's calibrated default): not the
   * clustering τ. Below 0 it is off, and so is each procedure's own acceptance (calibration).
   */
  threshold: number;
  /** How far below a procedure's own acceptance a goal may score (SKILLSMITH_RECALL_ACCEPTANCE_SLACK; src/procedures/recall-acceptance.ts). */
  acceptanceSlack?: number;
  /** Where a planner's recall is recorded as use (last_used_at); none for recalls that are not a use (review, eval). */
  usage?: RecallUsage;
  /**
   * The tenant's embedding models this configuration (embedder, threshold) was decided from, when
   * it was kept from an earlier request: the recall fails with TenantModelsChanged if the tenant's
   * models are no longer these (checked by the search statement itself, no read of its own).
   */
  tenantModels?: readonly string[];
  /**
   * The recall spaces a pass builds (src/recall/recall-space.ts): where a tenant has one, its goal's
   * job is told in it, and recall abstains for the goal of a job without a skill. Without (or for a
   * tenant no pass has built one for), the goal vectors alone.
   */
  spaces?: RecallSpaces;
  /** The vectors of goals already asked (query-embeddings.ts); without, every goal is embedded. */
  queryEmbeddings?: QueryEmbeddings;
}

/** The goals' vectors for the goal task: from the process's cache where one is given. */
function embedGoals({ embedder, queryEmbeddings }: RecallDependencies, tenantId: string, goals: string[]): Promise<Float32Array[]> {
  // A goal, compared mostly with goals: embedded for the same task as the goals it is matched against.
  return queryEmbeddings ? queryEmbeddings.embed(tenantId, embedder, goals) : embedder.embed(goals, 'goal');
}

/** recall_skill bound to its dependencies: what the API, the CLI and the review receive. */
export type RecallFunction = (tenantId: string, request: z.input<typeof recallRequestSchema>) => Promise<RecalledSkill[]>;

export async function recallSkill(
  dependencies: RecallDependencies,
  tenantId: string,
  request: z.input<typeof recallRequestSchema>,
): Promise<RecalledSkill[]> {
  const { goal, topK } = recallRequestSchema.parse(request);
  const [embedding] = await embedGoals(dependencies, tenantId, [goal]);
  return search(dependencies, dependencies.pool, tenantId, goal, embedding!, topK);
}

/**
 * recall_skill for several goals at once (a review batch's): the goals are embedded together, in
 * the embedder's batches — far cheaper per goal than one at a time — then each is searched alone,
 * all on one connection with generic plans (withGenericPlans).
 * Results in the order of the goals.
 */
export async function recallSkills(
  dependencies: RecallDependencies,
  tenantId: string,
  goals: readonly string[],
  topK?: number,
): Promise<RecalledSkill[][]> {
  const requests = goals.map((goal) => recallRequestSchema.parse({ goal, topK }));
  if (requests.length === 0) return [];
  const embeddings = await embedGoals(
    dependencies,
    tenantId,
    requests.map((request) => request.goal),
  );
  const searchAll = async (db: Queryable) => {
    const results: RecalledSkill[][] = [];
    for (const [index, request] of requests.entries()) {
      results.push(await search(dependencies, db, tenantId, request.goal, embeddings[index]!, request.topK));
    }
    return results;
  };
  // The embedded database plans every statement anyway (none is named there, see searchRecallVectors).
  if (requests.length === 1 || isEmbeddedDatabase(dependencies.pool)) return searchAll(dependencies.pool);
  return withGenericPlans(dependencies.pool, searchAll);
}

/**
 * Runs `fn` on one connection whose named statements run their generic plan. With PostgreSQL's
 * own choice (plan_cache_mode = auto) recall's statement was planned again for every goal of a
 * batch — a plan made for the goal's own vector always looks a little cheaper, though the vector's
 * value decides no plan choice — and that planning was ~1.4 ms of the ~2 ms of PostgreSQL CPU a
 * search cost (native, bench/results/2026-11-29-run-intake.md). The generic plan takes the tenant's share of
 * the vectors from the table's statistics. SET LOCAL: the setting ends with the transaction and
 * never reaches the pool's other users. (Only here: recall_skill's own latency is issue #15 item 3's.)
 */
function withGenericPlans<T>(pool: pg.Pool, fn: (db: Queryable) => Promise<T>): Promise<T> {
  return withTransaction(pool, async (client) => {
    await client.query('SET LOCAL plan_cache_mode = force_generic_plan');
    return fn(client);
  });
}

async function search(
  dependencies: RecallDependencies,
  db: Queryable,
  tenantId: string,
  goal: string,
  embedding: Float32Array,
  topK: number,
): Promise<RecalledSkill[]> {
  const { embedder, threshold, acceptanceSlack = DEFAULT_ACCEPTANCE_SLACK, usage, tenantModels } = dependencies;
  const bodyChars = MAX_RECALL_BODY_CHARS;
  const matches =
    (await searchInSpace(dependencies, db, tenantId, embedding, topK)) ??
    (await searchRecallVectors(
      db,
      tenantId,
      { embedding, modelId: embedder.modelId, text: goal },
      {
        threshold,
        acceptanceSlack: threshold < 0 ? null : acceptanceSlack,
        limit: topK,
        bodyChars,
        ...(tenantModels ? { tenantModels } : {}),
      },
    ));
  usage?.record(
    tenantId,
    matches.map((match) => match.id),
  );
  return matches.map((match) => ({
    name: match.name,
    whenToUse: match.whenToUse,
    body: match.truncated ? `${match.body}${TRUNCATION_MARKER}` : match.body,
    toolsRequired: match.toolsRequired,
    revision: match.revision,
    score: match.similarity,
  }));
}

/** Times a search follows a space rebuilt under it before it takes the goal vectors alone. */
const STALE_SPACE_RETRIES = 3;

/** Recall in the tenant's recall space, or null where it has none. */
async function searchInSpace(
  { embedder, threshold, spaces, tenantModels }: RecallDependencies,
  db: Queryable,
  tenantId: string,
  embedding: Float32Array,
  topK: number,
) {
  if (!spaces) return null;
  for (let attempt = 0; attempt < STALE_SPACE_RETRIES; attempt++) {
    const space = await spaces.current(db, tenantId, embedder.modelId);
    if (!space || space.dimension !== embedding.length) return null;
    const found = await searchRecallSpace(
      db,
      tenantId,
      { embedding, whitened: whiten(space, embedding), modelId: embedder.modelId, version: space.version },
      {
        threshold,
        limit: topK,
        bodyChars: MAX_RECALL_BODY_CHARS,
        correction: CENTROID_SIZE_CORRECTION,
        ...(tenantModels ? { tenantModels } : {}),
      },
    );
    if (!found.stale) return found.matches;
    spaces.forget(tenantId, embedder.modelId);
  }
  return null;
}
