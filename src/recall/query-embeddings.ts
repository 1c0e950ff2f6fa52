import type { Embedder } from '../embedding/embedder.ts';
import { normaliseGoalText } from '../embedding/goal-text.ts';

/** Recall goals whose vectors a process keeps (a 384-d vector is 1.5 KiB: 16 MiB at most, 768-d twice that). */
export const QUERY_EMBEDDINGS_KEPT = 10_000;

/**
 * The vectors of the goals recall was asked, per tenant, model and normalised goal text, the least
 * recently used forgotten first: agents ask the same goals again and again, and embedding the goal
 * is most of a recall's cost. Keyed by the model, so a tenant moved to another model (a reembed)
 * never gets a vector of the old one; keyed by the tenant, so no tenant learns from the cache what
 * another asked. The vector of a normalised text is the vector of every spelling of it
 * (goal-text.ts), and the embedder is deterministic per text, so a kept vector is exactly the one
 * embedding again would give.
 */
export class QueryEmbeddings {
  private readonly kept = new Map<string, Float32Array>();

  constructor(private readonly limit = QUERY_EMBEDDINGS_KEPT) {}

  /** The goals' vectors for the goal task, in order; only those not kept are embedded, in one call. */
  async embed(tenantId: string, embedder: Embedder, goals: readonly string[]): Promise<Float32Array[]> {
    const texts = goals.map(normaliseGoalText);
    const keys = texts.map((text) => JSON.stringify([tenantId, embedder.modelId, text]));
    const vectors = keys.map((key) => this.take(key));
    const missing = [...new Set(texts.filter((_, index) => !vectors[index]))];
    if (missing.length > 0) {
      const embedded = await embedder.embed(missing, 'goal');
      const byText = new Map(missing.map((text, index) => [text, embedded[index]!]));
      for (const [index, text] of texts.entries()) {
        if (vectors[index]) continue;
        vectors[index] = byText.get(text)!;
        this.keep(keys[index]!, vectors[index]);
      }
    }
    return vectors as Float32Array[];
  }

  private take(key: string): Float32Array | undefined {
    const vector = this.kept.get(key);
    if (vector) {
      this.kept.delete(key);
      this.kept.set(key, vector);
    }
    return vector;
  }

  private keep(key: string, vector: Float32Array): void {
    this.kept.set(key, vector);
    if (this.kept.size > this.limit) this.kept.delete(this.kept.keys().next().value!);
  }
}
