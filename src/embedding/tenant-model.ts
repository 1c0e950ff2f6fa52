import { configForModel, type Config } from '../app/config.ts';
import { SkillsmithError } from '../errors/skillsmith-error.ts';
import type { Queryable } from '../store/database.ts';
import { tenantEmbeddingModels } from './goal-embedding-repository.ts';

/**
 * The configured model (SKILLSMITH_EMBEDDING_MODEL, set) is not the one the tenant's goals and
 * skills were embedded with: comparing vectors of two models is meaningless, so nothing runs
 * until the setting goes or the tenant is moved, explicitly, with `skillsmith reembed`.
 */
export class TenantEmbeddingModelMismatch extends SkillsmithError {
  static override readonly code = 'TenantEmbeddingModelMismatch';
  static override readonly httpStatus = 503;
  static override readonly retryable = false;
  constructor(
    readonly tenantId: string,
    readonly tenantModelId: string,
    readonly configuredModelId: string,
  ) {
    super(
      `tenant ${tenantId} is embedded with ${tenantModelId}, but SKILLSMITH_EMBEDDING_MODEL=${configuredModelId}: ` +
        `unset SKILLSMITH_EMBEDDING_MODEL to use ${tenantModelId}, or move the tenant to ${configuredModelId} with ` +
        `\`SKILLSMITH_EMBEDDING_MODEL=${configuredModelId} npx skillsmith reembed --tenant ${tenantId}\``,
    );
  }
}

/**
 * The configuration a tenant's work runs with: the tenant remembers the model its goals were
 * embedded with (`embedding_models`), and that model's profile (its pooling, prefixes, τ, cut and
 * recall threshold, under whatever was set explicitly) is used whenever SKILLSMITH_EMBEDDING_MODEL
 * is unset. A tenant with nothing embedded yet takes the configured model. A model set explicitly
 * that the tenant was not embedded with is refused (TenantEmbeddingModelMismatch), never mixed.
 */
export async function configForTenant(db: Queryable, config: Config, tenantId: string): Promise<Config> {
  return (await resolveTenantConfig(db, config, tenantId)).config;
}

export interface ResolvedTenantConfig {
  config: Config;
  /**
   * The tenant's embedding models the configuration was decided from, the most recently recorded
   * first: what a later read compares to know the decision still holds.
   */
  models: string[];
}

/** configForTenant, with the models it was decided from. */
export async function resolveTenantConfig(db: Queryable, config: Config, tenantId: string): Promise<ResolvedTenantConfig> {
  const models = (await tenantEmbeddingModels(db, tenantId)).map((model) => model.modelId);
  return { config: decideTenantConfig(config, tenantId, models), models };
}

function decideTenantConfig(config: Config, tenantId: string, models: readonly string[]): Config {
  if (models.length === 0 || models.includes(config.embedding.model)) return config;
  const tenantModel = models[0]!;
  // A hand-built config (no modelChoice) is taken as set explicitly.
  if (config.modelChoice?.explicit ?? true) throw new TenantEmbeddingModelMismatch(tenantId, tenantModel, config.embedding.model);
  return configForModel(config, tenantModel);
}

/**
 * A read found the tenant's embedding models changed since its configuration was resolved (a
 * reembed or a first embedding, in this process or another): whatever was decided from them
 * (the model, its recall threshold) must be resolved again. Retryable: resolving again is the fix,
 * which recall does at once (services.ts), so no request is ever answered with it.
 */
export class TenantModelsChanged extends SkillsmithError {
  static override readonly code = 'TenantModelsChanged';
  constructor(
    readonly tenantId: string,
    readonly expected: readonly string[],
    readonly found: readonly string[],
  ) {
    super(
      `tenant ${tenantId}'s embedding models changed during the request (${expected.join(', ') || 'none'} → ${found.join(', ') || 'none'}): retry`,
    );
  }
}
