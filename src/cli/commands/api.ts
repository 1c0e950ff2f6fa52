import type { Command } from 'commander';
import type { CliContext } from '../context.ts';
import { exitIfShutdownOverruns } from '../shutdown.ts';

/** `skillsmith api`: the HTTP API in the foreground until SIGINT/SIGTERM. */
export function registerApiCommands(program: Command, context: CliContext): void {
  program
    .command('api')
    .description('run the HTTP API (SKILLSMITH_API_HOST:SKILLSMITH_API_PORT, default 127.0.0.1:8080) in the foreground')
    .action(async (_options: unknown, command: Command) => {
      const { json } = command.optsWithGlobals<{ json: boolean }>();
      const { config, logger } = context;
      const [{ loadApiTokens }, { startApiServer }] = await Promise.all([import('../../api/auth.ts'), import('../../api/server.ts')]);
      const tokens = loadApiTokens(config.api.tokens);
      if (tokens.length === 0) logger.warn('SKILLSMITH_API_TOKENS is not set: every /v1 route will answer 401');
      const api = await startApiServer(await context.services());
      try {
        context.output.result(
          json,
          { url: api.url, openapi: `${api.url}/openapi.json`, tokens: tokens.length },
          () => `api listening on ${api.url} (OpenAPI at ${api.url}/openapi.json; ${tokens.length} tokens) — Ctrl-C stops it`,
        );
        await new Promise<void>((done) => {
          process.once('SIGINT', done);
          process.once('SIGTERM', done);
        });
        exitIfShutdownOverruns(logger);
      } finally {
        await api.close();
      }
    });
}
