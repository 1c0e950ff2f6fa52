import type pg from 'pg';
import { z } from 'zod';
import type { Embedder } from '../embedding/embedder.ts';
import { findNearestProcedures, touchProcedures } from '../procedures/procedure-repository.ts';
import type { SkillRepository } from '../store/skill-repository.ts';

/**
 * recall_skill(goal, topK = 2): the procedures whose when_to_use is nearest to the goal, only
 * enabled and not superseded ones at cosine ≥ τ, bodies cut at 1,500 characters with an explicit
 * marker. A method for planners, never an LLM-facing tool.
 */

export const MAX_RECALL_BODY_CHARS = 1500;
export const TRUNCATION_MARKER = '… (truncated)';

export const recallRequestSchema = z.strictObject({
  goal: z.string().trim().min(1, 'goal is empty').max(2000, 'goal is longer than 2000 characters'),
  topK: z.coerce.number().int().min(1).max(20).default(2),
});

export interface RecalledSkill {
  name: string;
  whenToUse: string;
  body: string;
  toolsRequired: string[];
  revision: number;
  score: number;
}

export function truncateBody(body: string): string {
  const characters = [...body];
  if (characters.length <= MAX_RECALL_BODY_CHARS) return body;
  return `${characters.slice(0, MAX_RECALL_BODY_CHARS).join('')}${TRUNCATION_MARKER}`;
}

export interface RecallDependencies {
  pool: pg.Pool;
  skills: SkillRepository;
  embedder: Embedder;
  similarityTau: number;
}

/** recall_skill bound to its dependencies: what the API, the CLI and the review receive. */
export type RecallFunction = (tenantId: string, request: z.input<typeof recallRequestSchema>) => Promise<RecalledSkill[]>;

export async function recallSkill(
  { pool, skills, embedder, similarityTau }: RecallDependencies,
  tenantId: string,
  request: z.input<typeof recallRequestSchema>,
): Promise<RecalledSkill[]> {
  const { goal, topK } = recallRequestSchema.parse(request);
  const [query] = await embedder.embed([goal], 'query');
  const nearest = await findNearestProcedures(pool, tenantId, query!, { limit: topK, recallableOnly: true });
  const matches = nearest.filter((procedure) => procedure.score >= similarityTau);
  if (matches.length === 0) return [];
  // Pinned refs: the exact revision the procedure records, archived or not.
  const revisions = await Promise.all(matches.map((match) => skills.resolve(tenantId, `${match.name}@${match.revision}`)));
  await touchProcedures(pool, tenantId, matches.map((match) => match.id));
  return matches.map((match, index) => ({
    name: match.name,
    whenToUse: match.whenToUse,
    body: truncateBody(revisions[index]!.body),
    toolsRequired: match.toolsRequired,
    revision: match.revision,
    score: match.score,
  }));
}
