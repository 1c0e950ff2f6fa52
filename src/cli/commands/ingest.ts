import type { Command } from 'commander';
import type { IngestResult } from '../../runs/jsonl-ingest.ts';
import { createProgressReporter } from '../progress-reporter.ts';
import type { CliContext } from '../context.ts';

/**
 * `skillsmith ingest FILE.jsonl [--tenant T] [--skip-invalid] [--json]`
 *
 * Validates every line first; with any invalid line and no --skip-invalid nothing is ingested,
 * every error is listed (`line N: <field path>: <reason>`) and the exit code is 1.
 * --json prints `{ file, lines, valid, invalid, inserted, unchanged, errors: [{ line, path, reason }] }`.
 */
export function registerIngestCommands(program: Command, context: CliContext): void {
  program
    .command('ingest')
    .description('import run reports from a JSONL file (one run report per line); validates every line first')
    .argument('<file>', 'a JSONL file of run reports')
    .option('--skip-invalid', 'ingest the valid lines and report the invalid ones', false)
    .action(async (file: string, _options: unknown, command: Command) => {
      const { tenant, json, quiet, skipInvalid } = command.optsWithGlobals<{
        tenant: string;
        json: boolean;
        quiet: boolean;
        skipInvalid: boolean;
      }>();
      // An explicit --tenant places lines without tenantId and must match lines that have one;
      // without it each line keeps its own tenantId (default "default").
      const explicitTenant = command.getOptionValueSourceWithGlobals('tenant') === 'cli' ? tenant : undefined;
      const [{ formatIngestError, ingestJsonlFile }, { requireReadableFile }] = await Promise.all([
        import('../../runs/jsonl-ingest.ts'),
        import('../../input-file.ts'),
      ]);
      // A file that cannot be read is said before any database is opened.
      await requireReadableFile(file);
      const pool = await context.openPool();
      const progress = createProgressReporter({ quiet });
      const kibibytes = (bytes: number) => Math.round(bytes / 1024);
      let result: IngestResult;
      try {
        result = await ingestJsonlFile(pool, file, {
          ...(explicitTenant === undefined ? {} : { tenantId: explicitTenant }),
          skipInvalid,
          onProgress: ({ phase, bytesRead, totalBytes }) =>
            progress.update(phase === 'validate' ? 'validating' : 'ingesting', kibibytes(bytesRead), kibibytes(totalBytes), 'KiB'),
        });
      } finally {
        progress.stop();
      }
      const refused = result.invalid > 0 && !skipInvalid;
      if (!json) for (const error of result.errors) process.stderr.write(`${formatIngestError(error)}\n`);
      context.output.result(json, result, () => describe(result, refused));
      if (refused) process.exitCode = 1;
    });
}

function describe(result: IngestResult, refused: boolean): string {
  if (refused) {
    return `${result.file}: ${result.invalid} of ${result.valid + result.invalid} runs invalid; nothing ingested (fix them, or pass --skip-invalid)`;
  }
  const skipped = result.invalid > 0 ? `, ${result.invalid} invalid skipped` : '';
  return `${result.file}: ${result.inserted} runs ingested, ${result.unchanged} unchanged${skipped}`;
}
