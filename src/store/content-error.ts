/**
 * A database error caused by what was written (SQLSTATE classes 22 data exception, 23 integrity
 * violation, 54 program limit), e.g. a timestamp PostgreSQL cannot hold: writing the same content
 * again cannot help, so it is the writer's refusal, never a retry.
 */
export function isContentError(error: unknown): error is Error & { code: string } {
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof Error && typeof code === 'string' && /^(22|23|54)[0-9A-Z]{3}$/.test(code);
}
