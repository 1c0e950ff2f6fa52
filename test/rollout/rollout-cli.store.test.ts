import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTHORING_IMPLEMENTATION_VERSION } from '../../src/rollout/activation.ts';
import { runSkillsmith } from '../support/cli.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';

let database: TestDatabase;
let scratch: string;

beforeAll(async () => {
  database = await openTestDatabase();
  scratch = await mkdtemp(join(tmpdir(), 'skillsmith-rollout-cli-'));
});

afterAll(async () => {
  await database?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

const combination = { modelPolicy: 'pilot-model', policyProfile: 'none', authoringVersion: AUTHORING_IMPLEMENTATION_VERSION };
const skillsmith = (...args: string[]) =>
  runSkillsmith(args, {
    DATABASE_URL: database.url,
    SKILLSMITH_HOME: join(scratch, 'home'),
    SKILLSMITH_MODEL_POLICY: combination.modelPolicy,
    SKILLSMITH_AUTHORING_ENABLED: 'true',
    NODE_NO_WARNINGS: '1',
  });

describe('skillsmith rollout', () => {
  it('records a pairs file, checks it per combination, and shows the tenant activated by evidence', async () => {
    const lines = Array.from({ length: 32 }, (_, index) =>
      JSON.stringify({
        caseId: `case-${index}`,
        baselineCompleted: index >= 8,
        authoredCompleted: true,
        baselinePolicyFailures: 0,
        authoredPolicyFailures: 0,
        ...combination,
      }),
    );
    const file = join(scratch, 'pairs.jsonl');
    await writeFile(file, `${lines.join('\n')}\n`);

    const recorded = await skillsmith('rollout', 'record', '--file', file, '--tenant', 'acme', '--json');
    expect(recorded.code).toBe(0);
    expect(JSON.parse(recorded.stdout)).toMatchObject({ samples: 32, inserted: 32, unchanged: 0, invalid: 0 });
    const again = await skillsmith('rollout', 'record', '--file', file, '--tenant', 'acme', '--json');
    expect(JSON.parse(again.stdout)).toMatchObject({ inserted: 0, unchanged: 32 });

    const check = await skillsmith(
      'rollout',
      'check',
      '--model-policy',
      'pilot-model',
      '--policy-profile',
      'none',
      '--authoring-version',
      AUTHORING_IMPLEMENTATION_VERSION,
      '--tenant',
      'acme',
      '--json',
    );
    expect(check.code).toBe(0);
    const document = JSON.parse(check.stdout);
    expect(document).toMatchObject({ n: 32, b: 8, c: 0, improvement: 0.25, policyRegression: false, passed: true, reasons: [] });
    expect(document.interval.lower).toBeGreaterThan(0);

    const elsewhere = await skillsmith('rollout', 'check', '--authoring-version', 'authoring-0', '--tenant', 'acme', '--json');
    expect(JSON.parse(elsewhere.stdout)).toMatchObject({ n: 0, passed: false });

    const shown = await skillsmith('rollout', 'show', '--tenant', 'acme', '--json');
    expect(JSON.parse(shown.stdout)).toMatchObject({ combination, active: true, basis: 'evidence', authoring: true, review: false });
  });

  it('refuses a bad pairs file line by line with exit code 1, and records nothing', async () => {
    const file = join(scratch, 'bad.jsonl');
    await writeFile(file, `${JSON.stringify({ caseId: 'x', baselineCompleted: 1 })}\nnot json\n`);
    const result = await skillsmith('rollout', 'record', '--file', file, '--tenant', 'globex');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('line 1: baselineCompleted: Invalid input: expected boolean, received number (refused value 1)');
    expect(result.stderr).toContain('line 2: (line): invalid JSON');
    expect(result.stdout).toContain('nothing recorded');
  });

  it('records an override with who and why, visible in show, and requires both', async () => {
    const missing = await skillsmith('rollout', 'override', '--by', 'ops-lead', '--tenant', 'globex');
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/--reason/);

    const granted = await skillsmith('rollout', 'override', '--by', 'ops-lead', '--reason', 'pilot', '--tenant', 'globex', '--json');
    expect(granted.code).toBe(0);
    const shown = await skillsmith('rollout', 'show', '--tenant', 'globex');
    expect(shown.stdout).toContain('tenant globex: ACTIVE (by override)');
    expect(shown.stdout).toMatch(/grant by ops-lead .*: pilot/);
  });
});
