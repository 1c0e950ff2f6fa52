import { createHash } from 'node:crypto';

/**
 * A goal as the embedder sees it: trimmed, every run of whitespace one space. The BERT-family
 * tokenizers of the supported models split on whitespace, so this changes none of their vectors;
 * it lets goals that differ only in spacing share one embedding. The normalised text is what gets embedded, so a cached vector is
 * always exactly the vector of its key.
 */
export function normaliseGoalText(goal: string): string {
  return goal.trim().replace(/\s+/g, ' ');
}

/** The cache key of a normalised goal text: its sha256, hex. */
export function goalTextHash(normalisedGoal: string): string {
  return createHash('sha256').update(normalisedGoal, 'utf8').digest('hex');
}
