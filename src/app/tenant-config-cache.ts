import type { Config } from './config.ts';
import type { Queryable } from '../store/database.ts';
import { resolveTenantConfig, type ResolvedTenantConfig } from './tenant-config.ts';

/**
 * Each tenant's resolved configuration (src/app/tenant-config.ts), kept between requests:
 * resolving it reads `embedding_models`, a round trip more on every recall. A kept entry is never
 * taken on trust: whoever uses one compares its `models` with the tenant's models in the same
 * snapshot as its own read (recall's statement returns them with its rows) and calls `forget` when they differ —
 * after a reembed or a tenant's first embedding, by this process or any other — then resolves again.
 */
export interface TenantConfigCache {
  get(tenantId: string): Promise<ResolvedTenantConfig>;
  forget(tenantId: string): void;
}

/** Tenants kept at most; past it the longest kept is dropped (it is read again when asked for). */
const MAX_TENANTS = 10_000;

export function createTenantConfigCache(db: Queryable, config: Config): TenantConfigCache {
  const kept = new Map<string, Promise<ResolvedTenantConfig>>();
  return {
    get(tenantId) {
      const existing = kept.get(tenantId);
      if (existing) return existing;
      const resolving = resolveTenantConfig(db, config, tenantId);
      if (kept.size >= MAX_TENANTS) kept.delete(kept.keys().next().value!);
      kept.set(tenantId, resolving);
      // A refusal (TenantEmbeddingModelMismatch) or a failed read is not kept: the next request reads again.
      resolving.catch(() => {
        if (kept.get(tenantId) === resolving) kept.delete(tenantId);
      });
      return resolving;
    },
    forget(tenantId) {
      kept.delete(tenantId);
    },
  };
}
