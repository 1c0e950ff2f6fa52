import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCorpusRuns } from '../../src/eval/eval-corpus.ts';
import { InputFileUnreadable } from '../../src/input/input-file.ts';
import { recordPairsFile } from '../../src/rollout/pairs-recording.ts';
import { ingestJsonlFile } from '../../src/runs/jsonl-ingest.ts';
import { runSkillsmith } from '../support/cli.ts';

// Each reader refuses before it touches the database: a pool it would use is never reached.
const noPool = {} as pg.Pool;

describe('a file argument that is not a readable file is said in words, naming the file', () => {
  let scratch: string;
  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'skillsmith-input-'));
  });
  afterAll(async () => {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('ingest, rollout record and eval: a missing file and a directory', async () => {
    const missing = join(scratch, 'runs.jsonl');
    const readers = [
      (file: string) => ingestJsonlFile(noPool, file),
      (file: string) => recordPairsFile(noPool, 'acme', file),
      (file: string) => readCorpusRuns(file, [], 'acme', join(scratch, 'copy.jsonl')),
    ];
    for (const read of readers) {
      await expect(read(missing)).rejects.toThrow(new InputFileUnreadable(missing, 'no such file'));
      await expect(read(scratch)).rejects.toThrow(`cannot read ${scratch}: it is a directory, not a file`);
    }
  });

  it('the CLI answers InputFileUnreadable, in the JSON envelope under --json, never ENOENT or EISDIR', async () => {
    const missing = join(scratch, 'pairs.jsonl');
    // rollout record reads the file before it opens the database.
    const env = { DATABASE_URL: 'postgres://127.0.0.1:1/none', SKILLSMITH_HOME: join(scratch, 'home') };
    const failed = await runSkillsmith(['rollout', 'record', '--file', missing, '--json'], env);
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout)).toEqual({ error: { code: 'InputFileUnreadable', message: `cannot read ${missing}: no such file` } });
    const directory = await runSkillsmith(['rollout', 'record', '--file', scratch], env);
    expect(directory.stderr).toBe(`skillsmith: cannot read ${scratch}: it is a directory, not a file\n`);
    expect(`${failed.stderr}${directory.stderr}`).not.toMatch(/ENOENT|EISDIR/);
  });
});
