import type { StorageFull } from '../store/database-failure.ts';

/**
 * The last time this process's writes were refused for want of disk. `SELECT 1` still answers on
 * a full disk, so readiness asks this too: not ready while a write failed for storage within the
 * window (a write that meets a full disk again renews it).
 */
export interface StorageFailureMemory {
  note(failure: StorageFull): void;
  /** The failure and how long ago, when one was seen within the window. */
  recent(): { failure: StorageFull; ageMs: number } | undefined;
}

export function createStorageFailureMemory(windowMs = 60_000): StorageFailureMemory {
  let last: { failure: StorageFull; at: number } | undefined;
  return {
    note(failure) {
      last = { failure, at: Date.now() };
    },
    recent() {
      if (!last) return undefined;
      const ageMs = Date.now() - last.at;
      return ageMs <= windowMs ? { failure: last.failure, ageMs } : undefined;
    },
  };
}
