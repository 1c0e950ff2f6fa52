/**
 * The codes of every SkillsmithError whose class says `retryable = false`: the activities
 * throw them as non-retryable failures, and every activity retry policy of the workflows lists
 * them. Plain data with no imports, so the workflow bundle can use it; a test checks it against
 * the error classes, so the two cannot drift.
 */
export const NON_RETRYABLE_ERROR_CODES: readonly string[] = [
  'EmbeddingDimensionMismatch',
  'EmbeddingModelUnavailable',
  'EmbeddingRuntimeUnavailable',
  'GoalsNotEmbedded',
  'InputFileUnreadable',
  'LlmNotConfigured',
  'LlmResponseInvalid',
  'ReviewAnswerMalformed',
  'ReviewedRunMissing',
  'TenantEmbeddingModelMismatch',
];
