/**
 * The one base of skillsmith's own errors. An error carries its identity and its consequences
 * on its class, so mapping it is a property read, never a table keyed by name that drifts when
 * a class is renamed:
 * - `code`: stable, and also the error's `name`. It is the HTTP body's `error.code` and the type
 *   of the Temporal failure an activity throws, both relied on outside: never change one.
 * - `httpStatus`: what the API answers. 500 (the default) means the server's own failure: the
 *   API logs it and answers only `InternalError`, as for any unexpected error.
 * - `retryable`: false makes an activity fail fast with a non-retryable ApplicationFailure typed
 *   `code` (and the code must be in NON_RETRYABLE_ERROR_CODES, which the workflows use).
 * - `retryAfterSeconds`: for a 503, when a client may try again (the `Retry-After` header).
 *
 * A subclass declares them as statics: `static override readonly code = 'SkillNotFound'`.
 */
export abstract class SkillsmithError extends Error {
  static readonly code: string = 'SkillsmithError';
  static readonly httpStatus: number = 500;
  static readonly retryable: boolean = true;
  static readonly retryAfterSeconds: number | undefined = undefined;

  constructor(message?: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.code;
  }

  // Accessors on the prototype, not own fields: the API returns an error's own fields as details.
  get code(): string {
    return this.#definition().code;
  }

  get httpStatus(): number {
    return this.#definition().httpStatus;
  }

  get retryable(): boolean {
    return this.#definition().retryable;
  }

  get retryAfterSeconds(): number | undefined {
    return this.#definition().retryAfterSeconds;
  }

  #definition(): typeof SkillsmithError {
    return this.constructor as typeof SkillsmithError;
  }
}
