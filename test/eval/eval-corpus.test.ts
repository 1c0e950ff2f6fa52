import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCorpusRuns } from '../../src/eval/eval-corpus.ts';

const report = (runId: string) => ({
  agentId: 'agent-1',
  runId,
  goal: `goal of ${runId}`,
  status: 'completed',
  startedAt: '2026-01-01T00:00:00Z',
  completedAt: '2026-01-01T00:01:00Z',
  toolCalls: [{ tool: 'repo.clone', success: true }],
});

describe('eval corpus: the runs file', () => {
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'skillsmith-eval-corpus-'));
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('copies a report nested 10,000 deep as it came (for the ingest to refuse by line) instead of failing to serialise it', async () => {
    const deep = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
    const deepLine = JSON.stringify(report('deep')).replace('"toolCalls"', `"extra":${deep},"toolCalls"`);
    const runsFile = join(directory, 'runs.jsonl');
    await writeFile(runsFile, `${JSON.stringify(report('good'))}\n${deepLine}\n`);
    const tenantFile = join(directory, 'tenant.jsonl');
    const corpus = await readCorpusRuns(runsFile, [{ runId: 'good', family: 'clone' }], 'eval-tenant', tenantFile);
    expect(corpus.runs.map((run) => run.runId)).toEqual(['good']);
    const lines = (await readFile(tenantFile, 'utf8')).trimEnd().split('\n');
    expect(JSON.parse(lines[0]!)).toMatchObject({ runId: 'good', tenantId: 'eval-tenant' });
    expect(lines[1]).toBe(deepLine);
  });
});
