import { configForModel, type Config } from './config.ts';
import { TenantEmbeddingModelMismatch } from '../embedding/embedding-errors.ts';
import type { Queryable } from '../store/database.ts';
import { tenantEmbeddingModels } from '../embedding/goal-embedding-repository.ts';

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
