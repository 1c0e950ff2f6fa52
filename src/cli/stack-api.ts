import { request as httpRequest } from 'node:http';
import { localToken } from '../api/local-token.ts';
import type { Config } from '../app/config.ts';
import { SkillsmithError } from '../errors/skillsmith-error.ts';
import { readLocalSecret, readStackFile } from './stack-file.ts';

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
      let response: { status: number; text: string };
      try {
        response = await getText(url, { authorization: `Bearer ${localToken(secret, tenantId)}` });
      } catch (error) {
        throw new StackRequestFailed(
          'StackUnreachable',
          `the stack's API at ${apiUrl} (pid ${stack.pid}) does not answer: ${(error as Error).message}; ` +
            '`skillsmith status` checks it, `--local` runs the command in this process',
          0,
        );
      }
      let body: { error?: { code?: string; message?: string } } | undefined;
      try {
        body = JSON.parse(response.text) as typeof body;
      } catch {
        body = undefined;
      }
      if (response.status < 200 || response.status >= 300) {
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

/**
 * GET over node:http, not fetch: the stack's API is plain HTTP on this machine, and fetch's first
 * use loads undici, a noticeable share of a CLI call that should cost little more than start-up.
 */
function getText(url: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: 'GET', headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    // A recall embeds one goal; a model the stack loads on its first recall takes seconds, not minutes.
    request.setTimeout(120_000, () => request.destroy(new Error('no answer within 120 s')));
    request.on('error', reject);
    request.end();
  });
}
