import { touchProcedures } from '../procedures/procedure-repository.ts';
import type { Queryable } from '../store/database.ts';

/**
 * last_used_at for recalled procedures, written off the request path: recall records the ids and
 * returns; one UPDATE per tenant writes a batch after `delayMs`, or when flushed (a process that
 * ends flushes first). A failed write is reported to `onError` and dropped: last_used_at is a hint
 * for operators, not a record anything counts on.
 */
export interface RecallUsage {
  record(tenantId: string, procedureIds: readonly string[]): void;
  /** Writes what is pending now. */
  flush(): Promise<void>;
}

export function createRecallUsage(db: Queryable, options: { delayMs?: number; onError: (error: unknown) => void }): RecallUsage {
  const delayMs = options.delayMs ?? 1_000;
  let pending = new Map<string, Set<string>>();
  let timer: NodeJS.Timeout | undefined;

  async function flush(): Promise<void> {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const batch = pending;
    pending = new Map();
    for (const [tenantId, ids] of batch) await touchProcedures(db, tenantId, [...ids]);
  }

  return {
    record(tenantId, procedureIds) {
      if (procedureIds.length === 0) return;
      const ids = pending.get(tenantId) ?? new Set<string>();
      for (const id of procedureIds) ids.add(id);
      pending.set(tenantId, ids);
      if (timer) return;
      timer = setTimeout(() => void flush().catch(options.onError), delayMs);
      // Pending hints never keep a process alive; whoever ends it flushes.
      timer.unref();
    },
    flush,
  };
}
