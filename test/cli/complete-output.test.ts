import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { beginPassRecord, recordPassClusters } from '../../src/synthesis/pass-repository.ts';
import { runSkillsmithPiped } from '../support/cli.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';

const TENANT = 'big';
const PASS_ID = 'synthesis/big/2026-01-01T00:00:00.000Z';
const CLUSTERS = 6_000;

describe('--json output through a pipe', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await openTestDatabase();
    await beginPassRecord(database.pool, {
      tenantId: TENANT,
      id: PASS_ID,
      workflowRunId: 'run',
      full: true,
      since: null,
      distiller: 'extractive',
    });
    await recordPassClusters(
      database.pool,
      TENANT,
      PASS_ID,
      Array.from({ length: CLUSTERS }, (_, index) => ({
        clusterKey: `cluster-${String(index).padStart(5, '0')}`,
        rank: null,
        runIds: [`run-${index}-a`, `run-${index}-b`],
        successfulRunIds: [`run-${index}-a`],
        size: 2,
        successful: 1,
        successRate: 0.5,
        qualifying: false,
        value: null,
        reason: `cluster ${index} does not qualify: fewer than the minimum successful runs with a consensus sequence`,
      })),
    );
  });

  afterAll(async () => {
    await database?.close();
  });

  it('passes show --json prints more than 1 MiB completely when piped through cat', async () => {
    const run = await runSkillsmithPiped(['passes', 'show', PASS_ID, '--json', '--tenant', TENANT], {
      DATABASE_URL: database.url,
      NODE_NO_WARNINGS: '1',
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(Buffer.byteLength(run.stdout)).toBeGreaterThan(1024 * 1024);
    const shown = JSON.parse(run.stdout);
    expect(shown.id).toBe(PASS_ID);
    expect(shown.clusters).toHaveLength(CLUSTERS);
    expect(shown.clusters.at(-1).clusterKey).toBe(`cluster-${String(CLUSTERS - 1).padStart(5, '0')}`);
  });

  it('a reader that stops early (| head) ends the command quietly with its own exit code', async () => {
    const run = await runSkillsmithPiped(
      ['passes', 'show', PASS_ID, '--json', '--tenant', TENANT],
      { DATABASE_URL: database.url, NODE_NO_WARNINGS: '1' },
      ['head', '-c', '64'],
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toHaveLength(64);
  });
});
