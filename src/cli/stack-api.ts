import { localToken } from '../api/local-token.ts';
import type { Config } from '../config.ts';
import { SkillsmithError } from '../skillsmith-error.ts';
import { readLocalSecret, readStackFile } from '../stack-file.ts';

/**
 * The stack's API answered a CLI request with an error: its `error.code` is this error's `type`,
 * so the CLI reports it as it would the same error raised in its own process.
 */
export class StackRequestFailed extends SkillsmithError {
  static override readonly code = 'StackRequestFailed';
  constructor(
    readonly type: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export interface StackApi {
  apiUrl: string;
  /** GET `path` (with `query`) for `tenantId` with a local token; the parsed JSON body, or StackRequestFailed. */
  get(tenantId: string, path: string, query: Record<string, string>): Promise<unknown>;
}

/**
 * The running stack's API, when commands should go through it: a stack started here (`up`,
 * `demo --keep-running`) that serves an API and left its local secret, and DATABASE_URL unset or
 * the stack's own (else the command's data is elsewhere). Undefined otherwise: the command runs
 * in its own process.
 */
export async function openStackApi(config: Config): Promise<StackApi | undefined> {
  const stack = await readStackFile(config.home);
  if (!stack?.apiUrl || (config.databaseUrl && config.databaseUrl !== stack.databaseUrl)) return undefined;
  const secret = await readLocalSecret(config.home);
  if (!secret) return undefined;
  const apiUrl = stack.apiUrl;
  return {
    apiUrl,
    async get(tenantId, path, query) {
      const url = `${apiUrl}${path}?${new URLSearchParams(query).toString()}`;
      let response: Response;
      try {
        response = await fetch(url, {
          headers: { authorization: `Bearer ${localToken(secret, tenantId)}` },
          // A recall embeds one goal; a model the stack loads on its first recall takes seconds, not minutes.
          signal: AbortSignal.timeout(120_000),
        });
      } catch (error) {
        const cause = (error as Error & { cause?: Error }).cause?.message;
        throw new StackRequestFailed(
          'StackUnreachable',
          `the stack's API at ${apiUrl} (pid ${stack.pid}) does not answer: ${(error as Error).message}${cause ? ` (${cause})` : ''}; ` +
            '`skillsmith status` checks it, `--local` runs the command in this process',
          0,
        );
      }
      const body = (await response.json().catch(() => undefined)) as { error?: { code?: string; message?: string } } | undefined;
      if (!response.ok) {
        throw new StackRequestFailed(
          body?.error?.code ?? 'StackRequestFailed',
          body?.error?.message ?? `the stack's API answered ${response.status} to GET ${path}`,
          response.status,
        );
      }
      return body;
    },
  };
}
