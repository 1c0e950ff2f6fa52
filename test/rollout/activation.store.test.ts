import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSkillManage, type SkillManage } from '../../src/authoring/skill-manage.ts';
import { loadConfig } from '../../src/app/config.ts';
import { AUTHORING_IMPLEMENTATION_VERSION, currentCombination } from '../../src/rollout/activation.ts';
import type { Combination, PairedSample } from '../../src/rollout/paired-evidence.ts';
import { createConfiguredRolloutGate, SkillAuthoringNotActivated, type RolloutGate } from '../../src/rollout/rollout-gate.ts';
import { createSkillRepository, type SkillRepository } from '../../src/store/skill-repository.ts';
import { createRequest, trustedContext } from '../authoring/authoring-fixtures.ts';
import { countSkillRows, openTestDatabase, type TestDatabase } from '../support/database.ts';

let database: TestDatabase;
let gate: RolloutGate;
let repository: SkillRepository;
let skills: SkillManage;
let directory: string;
const config = loadConfig({ SKILLSMITH_AUTHORING_ENABLED: 'true', SKILLSMITH_MODEL_POLICY: 'gpt-x/strict' });
const current = currentCombination(config);

beforeAll(async () => {
  database = await openTestDatabase();
  gate = createConfiguredRolloutGate(database.pool, config);
  repository = createSkillRepository({ pool: database.pool, defaultLicense: 'Apache-2.0' });
  skills = createSkillManage({
    pool: database.pool,
    repository,
    defaultLicense: 'Apache-2.0',
    settings: { enabled: true, approvalProfile: 'none' },
    activation: gate,
  });
  directory = await mkdtemp(join(tmpdir(), 'skillsmith-rollout-'));
});

afterAll(async () => {
  await database?.close();
  if (directory) await rm(directory, { recursive: true, force: true });
});

/** `authoredOnly` pairs only the authored arm completed, `baselineOnly` the reverse, the rest both completed. */
function pairs(
  combination: Combination,
  counts: { n: number; authoredOnly: number; baselineOnly: number; prefix?: string },
): PairedSample[] {
  return Array.from({ length: counts.n }, (_, index) => ({
    caseId: `${counts.prefix ?? 'case'}-${index}`,
    baselineCompleted: index >= counts.authoredOnly,
    authoredCompleted: index < counts.authoredOnly || index >= counts.authoredOnly + counts.baselineOnly,
    baselinePolicyFailures: 0,
    authoredPolicyFailures: 0,
    ...combination,
  }));
}

async function pairsFile(name: string, lines: unknown[]): Promise<string> {
  const file = join(directory, name);
  await writeFile(file, lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n') + '\n');
  return file;
}

describe('the current combination', () => {
  it('is the configured model policy, the approval profile and the code authoring version', () => {
    expect(current).toEqual({ modelPolicy: 'gpt-x/strict', policyProfile: 'none', authoringVersion: AUTHORING_IMPLEMENTATION_VERSION });
    expect(currentCombination(loadConfig({ SKILLSMITH_LLM_MODEL: 'qwen2.5' })).modelPolicy).toBe('qwen2.5');
  });
});

describe('rollout record', () => {
  it('records a pairs file, and recording it again changes nothing', async () => {
    const file = await pairsFile('first.jsonl', pairs(current, { n: 12, authoredOnly: 3, baselineOnly: 1, prefix: 'rec' }));
    const first = await gate.recordFile('records', file);
    expect(first).toMatchObject({ lines: 12, samples: 12, valid: 12, invalid: 0, inserted: 12, unchanged: 0, errors: [] });
    const again = await gate.recordFile('records', file);
    expect(again).toMatchObject({ inserted: 0, unchanged: 12, errors: [] });
    expect(await gate.check('records', current)).toMatchObject({ n: 12, b: 3, c: 1 });
  });

  it('refuses a file with bad lines, naming line, field and refused value, and records nothing', async () => {
    const [good, second] = pairs(current, { n: 2, authoredOnly: 1, baselineOnly: 0, prefix: 'bad' });
    const file = await pairsFile('bad.jsonl', [
      good,
      { ...second, authoredCompleted: 'yes' },
      '{"caseId": ',
      { ...second, caseId: 'rec-0', authoredCompleted: false, baselineCompleted: false },
      { ...second, baselinePolicyFailures: -2, extra: 1 },
    ]);
    const result = await gate.recordFile('records', file);
    expect(result).toMatchObject({ lines: 5, invalid: 4, inserted: 0 });
    expect(result.errors).toEqual([
      { line: 2, path: 'authoredCompleted', reason: expect.stringMatching(/boolean/), value: '"yes"' },
      { line: 3, path: '(line)', reason: expect.stringMatching(/^invalid JSON/) },
      { line: 4, path: 'caseId', reason: expect.stringMatching(/recorded before .* different outcome/), value: '"rec-0"' },
      { line: 5, path: 'baselinePolicyFailures', reason: expect.stringMatching(/>=0|>= 0|too small/i), value: '-2' },
      { line: 5, path: 'extra', reason: 'unknown field', value: '"extra"' },
    ]);
    expect((await gate.check('records', current)).n).toBe(12);
  });

  it('keeps evidence per combination: none of it transfers to another authoring version, model policy or tenant', async () => {
    const next = { ...current, authoringVersion: 'authoring-2' };
    await gate.recordSamples('records', pairs(next, { n: 40, authoredOnly: 10, baselineOnly: 0, prefix: 'next' }));
    expect(await gate.check('records', next)).toMatchObject({ n: 40, b: 10, passed: true });
    expect(await gate.check('records', current)).toMatchObject({ n: 12, passed: false });
    expect(await gate.check('records', { ...current, modelPolicy: 'gpt-y' })).toMatchObject({ n: 0, passed: false });
    expect(await gate.check('elsewhere', next)).toMatchObject({ n: 0, passed: false });
  });
});

describe('activation: a tenant cannot activate authoring without passing evidence', () => {
  const create = (tenantId: string, invocation: string) =>
    skills.manage(trustedContext(tenantId, invocation), createRequest(`deploy-${invocation}`));

  it('refuses skill_manage for a tenant with no evidence, and writes nothing', async () => {
    const failure = await create('no-evidence', 'inv-1').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SkillAuthoringNotActivated);
    expect((failure as Error).message).toMatch(/not activated for tenant no-evidence .*0 paired samples; at least 30 are required/);
    expect((await countSkillRows(database.pool, 'no-evidence')).revisions).toBe(0);
    expect(await gate.status('no-evidence')).toMatchObject({ active: false, basis: null });
  });

  it('refuses evidence that falls short (29 strong pairs; 30 with a policy regression) and evidence for another combination', async () => {
    await gate.recordSamples('short', pairs(current, { n: 29, authoredOnly: 15, baselineOnly: 0 }));
    await expect(create('short', 'inv-2')).rejects.toThrow(SkillAuthoringNotActivated);

    const regressed = pairs(current, { n: 40, authoredOnly: 20, baselineOnly: 0 });
    regressed[39] = { ...regressed[39]!, authoredPolicyFailures: 1 };
    await gate.recordSamples('regressed', regressed);
    expect(await gate.status('regressed')).toMatchObject({ active: false, check: { policyRegression: true } });
    await expect(create('regressed', 'inv-3')).rejects.toThrow(/policy regression/);

    await gate.recordSamples(
      'other-version',
      pairs({ ...current, authoringVersion: 'authoring-0' }, { n: 40, authoredOnly: 20, baselineOnly: 0 }),
    );
    await expect(create('other-version', 'inv-4')).rejects.toThrow(SkillAuthoringNotActivated);
    expect((await countSkillRows(database.pool, 'other-version')).revisions).toBe(0);
  });

  it('activates a tenant whose evidence for the current combination passes', async () => {
    await gate.recordSamples('passing', pairs(current, { n: 30, authoredOnly: 6, baselineOnly: 0 }));
    expect(await gate.status('passing')).toMatchObject({ active: true, basis: 'evidence' });
    await expect(create('passing', 'inv-5')).resolves.toMatchObject({ status: 'installed', revision: 1 });
  });

  it('activates on an operator override recorded with who and why, until it is revoked; shown by rollout show', async () => {
    await expect(gate.override('overridden', { action: 'grant', decidedBy: ' ', reason: 'x' })).rejects.toThrow(/--by/);
    await gate.override('overridden', { action: 'grant', decidedBy: 'ops-lead', reason: 'pilot tenant, evaluated by hand' });
    await expect(create('overridden', 'inv-6')).resolves.toMatchObject({ status: 'installed' });
    const shown = await gate.show('overridden');
    expect(shown).toMatchObject({
      active: true,
      basis: 'override',
      capability: { authoring: true, review: false },
      authoring: true,
      review: false,
      override: { decidedBy: 'ops-lead', reason: 'pilot tenant, evaluated by hand', action: 'grant', combination: current },
    });

    await gate.override('overridden', { action: 'revoke', decidedBy: 'ops-lead', reason: 'pilot over' });
    await expect(create('overridden', 'inv-7')).rejects.toThrow(SkillAuthoringNotActivated);
    const after = await gate.show('overridden');
    expect(after).toMatchObject({ active: false, override: null });
    expect(after.overrides.map((decision) => decision.action)).toEqual(['grant', 'revoke']);
  });

  it('does not carry an override to another combination', async () => {
    await gate.override('pre-granted', {
      action: 'grant',
      decidedBy: 'ops-lead',
      reason: 'for the next release',
      combination: { ...current, authoringVersion: 'authoring-9' },
    });
    await expect(create('pre-granted', 'inv-8')).rejects.toThrow(SkillAuthoringNotActivated);
  });
});
