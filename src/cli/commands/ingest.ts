import { Option, type Command } from 'commander';
import type { IngestResult } from '../../runs/jsonl-ingest.ts';
import { INGEST_FORMATS, type IngestFormat } from '../../traces/trace-run.ts';
import { createProgressReporter } from '../progress-reporter.ts';
import type { CliContext } from '../context.ts';
import { setExamples } from '../help-examples.ts';

/**
 * `skillsmith ingest FILE [--format auto|run-report|openai|anthropic|otel] [--agent ID] [--tenant T] [--skip-invalid] [--json]`
 *
 * `--format auto` (the default) reads each record in the format detected (autoFileFormat says
 * when a big file is streamed as run reports instead). A record that does not fit a forced
 * format but reads as another says which.
 * Validates every record first; with any invalid one and no --skip-invalid nothing is ingested,
 * every error is listed (`line N: <field path>: <reason>`; a converted trace's also names its
 * format and record) and the exit code is 1. --json prints `{ file, lines, valid, invalid,
 * inserted, unchanged, errors: [{ line, path, reason, value?, format?, record? }], format,
 * formats? }` — `formats` counting the records read in each format (what `auto` chose).
 */
export function registerIngestCommands(program: Command, context: CliContext): void {
  const ingest = program
    .command('ingest')
    .description(
      'import runs from a file: run reports (JSONL, the default), or agent traces converted to run reports — OpenAI Chat Completions / Responses transcripts, Anthropic Messages, OTLP JSON GenAI spans; validates every record first',
    )
    .argument('<file>', 'a JSONL file (one record a line), or for a trace format also one JSON document')
    .addOption(
      new Option(
        '--format <format>',
        'what the file holds; auto detects each record (run reports and every trace format); a file too big to convert in memory that opens with a run report is streamed as run reports',
      )
        .choices(INGEST_FORMATS)
        .default('auto'),
    )
    .option('--agent <agentId>', "the agentId of converted traces (default: the trace's agent name, else the format's name)")
    .option('--skip-invalid', 'ingest the valid records and report the invalid ones', false)
    .action(async (file: string, _options: unknown, command: Command) => {
      const { tenant, json, quiet, skipInvalid, format, agent } = command.optsWithGlobals<{
        tenant: string;
        json: boolean;
        quiet: boolean;
        skipInvalid: boolean;
        format: IngestFormat;
        agent?: string;
      }>();
      // An explicit --tenant places lines without tenantId and must match lines that have one;
      // without it each line keeps its own tenantId (default "default").
      const explicitTenant = command.getOptionValueSourceWithGlobals('tenant') === 'cli' ? tenant : undefined;
      const [{ formatIngestError, ingestJsonlFile }, { requireReadableFile }] = await Promise.all([
        import('../../runs/jsonl-ingest.ts'),
        import('../../input/input-file.ts'),
      ]);
      // A file that cannot be read is said before any database is opened.
      await requireReadableFile(file);
      const pool = await context.openPool();
      const progress = createProgressReporter({ quiet });
      const kibibytes = (bytes: number) => Math.round(bytes / 1024);
      const options = {
        ...(explicitTenant === undefined ? {} : { tenantId: explicitTenant }),
        skipInvalid,
        onProgress: ({ phase, bytesRead, totalBytes }: { phase: 'validate' | 'ingest'; bytesRead: number; totalBytes: number }) =>
          progress.update(phase === 'validate' ? 'validating' : 'ingesting', kibibytes(bytesRead), kibibytes(totalBytes), 'KiB'),
      };
      let result: IngestResult;
      try {
        const { autoFileFormat, ingestTraceFile } = await import('../../traces/trace-file-ingest.ts');
        const { formatMisfit } = await import('../../traces/trace-format-detection.ts');
        const readAs = format === 'auto' ? await autoFileFormat(file) : format;
        if (readAs === 'run-report') {
          const forced = format === 'run-report';
          const ingested = await ingestJsonlFile(pool, file, { ...options, misfit: (value) => formatMisfit(value, 'run-report', forced) });
          const records = ingested.valid + ingested.invalid;
          result = forced ? ingested : { ...ingested, format, formats: records > 0 ? { 'run-report': records } : {} };
        } else {
          result = await ingestTraceFile(pool, file, { ...options, format: readAs, ...(agent === undefined ? {} : { agentId: agent }) });
        }
      } finally {
        progress.stop();
      }
      const refused = result.invalid > 0 && !skipInvalid;
      if (!json) for (const error of result.errors) process.stderr.write(`${formatIngestError(error)}\n`);
      context.output.result(json, result, () => describe(result, refused));
      if (refused) process.exitCode = 1;
    });
  setExamples(ingest, [
    'skillsmith ingest runs.jsonl --tenant acme',
    'skillsmith ingest transcripts.jsonl --format anthropic --agent support-bot --tenant acme',
  ]);
}

function formatsRead(result: IngestResult): string {
  if (result.formats === undefined) return '';
  const read = Object.entries(result.formats).map(([format, count]) => `${format} ${count}`);
  return ` (${result.format === 'auto' ? 'auto-detected: ' : 'read as '}${read.length > 0 ? read.join(', ') : 'nothing'})`;
}

function describe(result: IngestResult, refused: boolean): string {
  if (refused) {
    return `${result.file}: ${result.invalid} of ${result.valid + result.invalid} runs invalid; nothing ingested (fix them, or pass --skip-invalid)${formatsRead(result)}`;
  }
  const skipped = result.invalid > 0 ? `, ${result.invalid} invalid skipped` : '';
  return `${result.file}: ${result.inserted} runs ingested, ${result.unchanged} unchanged${skipped}${formatsRead(result)}`;
}
