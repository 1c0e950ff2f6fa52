import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../src/infra/temporal-dev-server.ts';
import { runSkillsmith } from '../support/cli.ts';

describe('skillsmith up (embedded stack) and CLI errors', () => {
  let home: string;

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'skillsmith-home-'));
  });
  afterAll(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('brings up embedded Postgres + a worker, proves the round trip, and stops cleanly', async () => {
    const result = await runSkillsmith(['up', '--check-only', '--json'], {
      SKILLSMITH_HOME: home,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      SKILLSMITH_POSTGRES_PORT: String(await freePort()),
      TEMPORAL_TASK_QUEUE: `up-${Date.now()}`,
      SKILLSMITH_API_PORT: String(await freePort()),
    });
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.code).toBe(0);
    const stack = JSON.parse(result.stdout);
    expect(stack.embeddedDatabase).toBe(true);
    expect(stack.temporalAddress).toBe(inject('temporalAddress'));
    expect(stack.check.vectorExtension).toMatch(/^0\.8\./);
    expect(stack.check.migrations).toBeGreaterThan(0);
    expect(stack.apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('refuses a malformed tenant with a one-line reason and exit 1', async () => {
    const result = await runSkillsmith(['migrate', '--tenant', 'Bad Tenant!'], { SKILLSMITH_HOME: home });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/invalid --tenant "Bad Tenant!"/);
  });

  it('says how to get a database when there is none', async () => {
    const result = await runSkillsmith(['migrate', '--json'], { SKILLSMITH_HOME: resolve(home, 'empty') });
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({
      error: { code: 'NoDatabase', message: expect.stringMatching(/set DATABASE_URL, or start the embedded stack/) },
    });
  });

  it('stops at start-up on a bad setting, naming the variable', async () => {
    const result = await runSkillsmith(['migrate'], { SKILLSMITH_MIN_STEPS: '-1' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^skillsmith: invalid SKILLSMITH_MIN_STEPS="-1"/);
  });
});
