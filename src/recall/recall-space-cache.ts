import type { Queryable } from '../store/database.ts';
import { loadRecallSpace, type StoredRecallSpace } from './recall-space-repository.ts';

/** Tenants whose recall space a process keeps (a 384-d space is 576 KiB). */
export const RECALL_SPACES_KEPT = 64;
/**
 * How long a tenant found without a space is taken to have none: its recalls then cost no read of
 * their own, and a space its first pass builds is used this long after at most (until then the goal
 * vectors alone answer, as before any pass built one).
 */
export const ABSENT_SPACE_MS = 10_000;

/**
 * The recall spaces a process has read, per tenant and model, the least recently used forgotten
 * first: a recall whitens its goal without reading the matrix again. A space another pass has
 * rebuilt since is noticed by the search (it asks for the classes of the version it holds) and
 * forgotten, so the next read takes the new one. Never shared across tenants.
 */
export class RecallSpaces {
  private readonly kept = new Map<string, StoredRecallSpace | { absentUntil: number }>();

  constructor(
    private readonly limit = RECALL_SPACES_KEPT,
    private readonly now: () => number = Date.now,
  ) {}

  /** The tenant's space for the model (null: none built yet, asked again ABSENT_SPACE_MS later). */
  async current(db: Queryable, tenantId: string, modelId: string): Promise<StoredRecallSpace | null> {
    const key = JSON.stringify([tenantId, modelId]);
    const kept = this.kept.get(key);
    if (kept && !('absentUntil' in kept && kept.absentUntil <= this.now())) {
      this.kept.delete(key);
      this.kept.set(key, kept);
      return 'absentUntil' in kept ? null : kept;
    }
    const space = await loadRecallSpace(db, tenantId, modelId);
    this.kept.delete(key);
    this.kept.set(key, space ?? { absentUntil: this.now() + ABSENT_SPACE_MS });
    if (this.kept.size > this.limit) this.kept.delete(this.kept.keys().next().value!);
    return space;
  }

  forget(tenantId: string, modelId: string): void {
    this.kept.delete(JSON.stringify([tenantId, modelId]));
  }
}
