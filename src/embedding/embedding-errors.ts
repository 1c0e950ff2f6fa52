import { SkillsmithError } from '../skillsmith-error.ts';

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
      `embedding model ${modelId} is unavailable (searched: ${searched.join('; ')}): ${reason}. ` +
        'Put the model there (for the test model: node bin/skillsmith.js models pull), ' +
        'or set SKILLSMITH_ALLOW_REMOTE_MODELS=true to let it be downloaded.',
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
