import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatIngestError } from '../../src/runs/jsonl-ingest.ts';
import { countRuns, findRun } from '../../src/runs/run-repository.ts';
import { ingestTraceFile, MAX_TRACE_FILE_BYTES, TraceFileTooLarge } from '../../src/traces/trace-file-ingest.ts';
import { runSkillsmith } from '../support/cli.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/traces/${name}`, import.meta.url));

let database: TestDatabase;
let directory: string;
beforeAll(async () => {
  database = await openTestDatabase();
  directory = await mkdtemp(join(tmpdir(), 'skillsmith-traces-'));
});
afterAll(async () => {
  await database?.close();
  if (directory) await rm(directory, { recursive: true, force: true });
});

describe('ingest --format (library)', () => {
  it('ingests each format into the tenant, and ingesting again changes nothing', async () => {
    const cases = [
      { file: 'openai-chat.jsonl', format: 'openai', runs: 2, toolCalls: 5 },
      { file: 'openai-responses.json', format: 'openai', runs: 1, toolCalls: 2 },
      { file: 'anthropic-messages.jsonl', format: 'anthropic', runs: 2, toolCalls: 4 },
      { file: 'otel-genai.jsonl', format: 'otel', runs: 2, toolCalls: 4 },
    ] as const;
    for (const { file, format, runs, toolCalls } of cases) {
      const tenantId = `t-${format}-${runs}-${toolCalls}`;
      const first = await ingestTraceFile(database.pool, fixture(file), { format, tenantId });
      expect(first, file).toMatchObject({
        invalid: 0,
        inserted: runs,
        unchanged: 0,
        errors: [],
        format,
        formats: { [format]: expect.any(Number) },
      });
      expect(await countRuns(database.pool, tenantId)).toEqual({ runs, toolCalls });
      const again = await ingestTraceFile(database.pool, fixture(file), { format, tenantId });
      expect(again, file).toMatchObject({ inserted: 0, unchanged: runs });
    }
  });

  it('groups OTel spans of one trace written in two export batches into one stored run, its status and errors kept', async () => {
    await ingestTraceFile(database.pool, fixture('otel-genai.jsonl'), { format: 'otel', tenantId: 'otel-group', agentId: 'sre-agent' });
    const run = await findRun(database.pool, 'otel-group', 'otel:4bf92f3577b34da6a3ce929d0e0e4736');
    expect(run).toMatchObject({ agentId: 'sre-agent', goal: 'Restart the stuck ingestion worker in eu-west', status: 'completed' });
    expect(run!.toolCalls.map((call) => [call.tool, call.success])).toEqual([
      ['workers_status', true],
      ['workers_restart', false],
      ['workers_restart', true],
    ]);
    expect(await findRun(database.pool, 'otel-group', 'otel:0af7651916cd43dd8448eb211c80319c')).toMatchObject({ status: 'failed' });
  });

  it('auto-detects every record of a mixed file and says how many it read in each format', async () => {
    const result = await ingestTraceFile(database.pool, fixture('mixed.jsonl'), { format: 'auto', tenantId: 'mixed' });
    expect(result).toMatchObject({
      lines: 5,
      valid: 5,
      invalid: 0,
      inserted: 5,
      format: 'auto',
      formats: { 'run-report': 1, openai: 2, anthropic: 1, otel: 1 },
    });
    expect(await findRun(database.pool, 'mixed', 'mixed-run-report-1')).toMatchObject({ goal: 'Clear the build cache' });
  });

  it('refuses the whole file when a record makes no run, naming its line, format, record and why; --skip-invalid ingests the rest', async () => {
    const file = join(directory, 'refusals-and-one-good.jsonl');
    const good = (await import('node:fs')).readFileSync(fixture('anthropic-messages.jsonl'), 'utf8').split('\n')[0]!;
    const refusals = (await import('node:fs')).readFileSync(fixture('refusals.jsonl'), 'utf8');
    await writeFile(file, `${refusals}${good}\n{"messages": [\n`);
    const refused = await ingestTraceFile(database.pool, file, { format: 'auto', tenantId: 'refusals' });
    expect(refused).toMatchObject({ lines: 6, valid: 1, invalid: 5, inserted: 0 });
    expect(refused.errors.map((error) => formatIngestError(error))).toEqual([
      'line 1 (openai): completion chatcmpl-nogoal: no user message with text to take the goal from',
      'line 2 (anthropic): message msg_notools: no tool calls: no assistant message has a tool_use block',
      'line 3 (otel): trace 11111111111111111111111111111111: no tool calls: no execute_tool span (gen_ai.operation.name = "execute_tool")',
      expect.stringMatching(/^line 4: \(line\): not a recognised record: expected a run report/),
      expect.stringMatching(/^line 6: \(line\): invalid JSON: /),
    ]);
    expect(await countRuns(database.pool, 'refusals')).toEqual({ runs: 0, toolCalls: 0 });
    const skipped = await ingestTraceFile(database.pool, file, { format: 'auto', tenantId: 'refusals', skipInvalid: true });
    expect(skipped).toMatchObject({ valid: 1, invalid: 5, inserted: 1 });
    expect(await countRuns(database.pool, 'refusals')).toEqual({ runs: 1, toolCalls: 3 });
  });

  it('refuses a converted run the contract refuses (a tool name with a space), naming the record and the field', async () => {
    const file = join(directory, 'bad-tool-name.jsonl');
    const transcript = {
      id: 'chatcmpl-badname',
      messages: [
        { role: 'user', content: 'do it' },
        { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bad name', arguments: '{}' } }] },
      ],
    };
    await writeFile(file, `${JSON.stringify(transcript)}\n`);
    const result = await ingestTraceFile(database.pool, file, { format: 'openai', tenantId: 'bad-name' });
    expect(result.errors.map((error) => formatIngestError(error))).toEqual([
      expect.stringMatching(/^line 1 \(openai\): completion chatcmpl-badname: toolCalls\[0\]\.tool: a tool name has no whitespace/),
    ]);
  });

  it('refuses a trace file over the in-memory limit before reading it, naming the limit', async () => {
    const file = join(directory, 'huge-sparse.jsonl');
    await writeFile(file, '');
    await truncate(file, MAX_TRACE_FILE_BYTES + 1); // sparse: no disk written, nothing read
    await expect(ingestTraceFile(database.pool, file, { format: 'otel', tenantId: 'huge' })).rejects.toThrow(
      new TraceFileTooLarge(
        `${file} is ${MAX_TRACE_FILE_BYTES + 1} bytes; a trace file is converted in memory and may be at most ${MAX_TRACE_FILE_BYTES} bytes (split it)`,
      ),
    );
  });
});

describe('skillsmith ingest --format (CLI)', () => {
  it('ingests each format with --json extended by format and formats, and exits 0', async () => {
    const env = { DATABASE_URL: database.url };
    for (const [file, format] of [
      ['openai-chat.jsonl', 'openai'],
      ['openai-responses.json', 'openai'],
      ['anthropic-messages.jsonl', 'anthropic'],
      ['otel-genai.jsonl', 'otel'],
      ['mixed.jsonl', 'auto'],
    ] as const) {
      const result = await runSkillsmith(['ingest', fixture(file), '--format', format, '--tenant', 'cli-traces', '--json', '--quiet'], env);
      expect(result.code, `${file}: ${result.stderr}`).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ file: fixture(file), invalid: 0, errors: [], format, formats: expect.any(Object) });
    }
    const human = await runSkillsmith(['ingest', fixture('mixed.jsonl'), '--format', 'auto', '--tenant', 'cli-traces', '--quiet'], env);
    expect(human.stdout).toMatch(/0 runs ingested, 5 unchanged \(auto-detected: run-report 1, openai 2, anthropic 1, otel 1\)/);
  });

  it('without --format detects the format (auto); a forced format that does not fit names the one the record reads as', async () => {
    const env = { DATABASE_URL: database.url };
    const detected = await runSkillsmith(
      ['ingest', fixture('anthropic-messages.jsonl'), '--tenant', 'cli-default', '--json', '--quiet'],
      env,
    );
    expect(detected.code, detected.stderr).toBe(0);
    expect(JSON.parse(detected.stdout)).toMatchObject({ invalid: 0, format: 'auto', formats: { anthropic: expect.any(Number) } });
    const asOpenai = await runSkillsmith(
      ['ingest', fixture('anthropic-messages.jsonl'), '--format', 'openai', '--tenant', 'cli-forced'],
      env,
    );
    expect(asOpenai.code).toBe(1);
    expect(asOpenai.stderr).toMatch(
      /^line 1 \(openai\): \(record\): reads as Anthropic messages \(anthropic\), not an OpenAI transcript: pass --format anthropic, or leave --format out \(auto detects it\)$/m,
    );
    const asRunReport = await runSkillsmith(
      ['ingest', fixture('openai-chat.jsonl'), '--format', 'run-report', '--tenant', 'cli-forced'],
      env,
    );
    expect(asRunReport.code).toBe(1);
    expect(asRunReport.stderr).toMatch(
      /^line 1: \(record\): reads as an OpenAI transcript \(openai\), not a run report: pass --format openai/m,
    );
    expect(asRunReport.stderr).not.toMatch(/✖|toolCalls/);
  });

  it('exits 1 naming every refused record on stderr, and with --skip-invalid ingests the rest', async () => {
    const env = { DATABASE_URL: database.url };
    const refused = await runSkillsmith(
      ['ingest', fixture('refusals.jsonl'), '--format', 'auto', '--tenant', 'cli-refusals', '--quiet'],
      env,
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^line 1 \(openai\): completion chatcmpl-nogoal: no user message with text to take the goal from$/m);
    expect(refused.stderr).toMatch(/^line 3 \(otel\): trace 11111111111111111111111111111111: no tool calls/m);
    expect(refused.stdout).toMatch(/4 of 4 runs invalid; nothing ingested/);
    const json = await runSkillsmith(
      ['ingest', fixture('refusals.jsonl'), '--format', 'auto', '--tenant', 'cli-refusals', '--json', '--quiet', '--skip-invalid'],
      env,
    );
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout).errors[1]).toEqual({
      line: 2,
      path: 'message msg_notools',
      reason: 'no tool calls: no assistant message has a tool_use block',
      format: 'anthropic',
      record: 'message msg_notools',
    });
    const unknown = await runSkillsmith(['ingest', fixture('refusals.jsonl'), '--format', 'gemini', '--json'], env);
    expect(unknown.code).not.toBe(0);
    expect(JSON.parse(unknown.stdout).error).toMatchObject({
      code: 'InvalidUsage',
      message: expect.stringMatching(/auto, run-report, openai, anthropic, otel/),
    });
  });
});
