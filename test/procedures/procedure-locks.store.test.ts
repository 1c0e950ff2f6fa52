import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertProcedure, lockProcedures, touchProcedures } from '../../src/procedures/procedure-repository.ts';
import { isEmbeddedDatabaseUrl, withTransaction } from '../../src/store/database.ts';
import { createSkillRepository } from '../../src/store/skill-repository.ts';
import { openTestDatabase } from '../support/database.ts';
import { until } from '../support/until.ts';

const database = await openTestDatabase();

/**
 * Found by the fault suite's hammer (bench/faults.ts): recall's last_used_at write (touchProcedures,
 * API process) and a review's track record (lockProcedures, worker) lock the same procedure rows;
 * the track record in id order, the touch in the order its scan met them — "deadlock detected",
 * one recall-use batch dropped and the track record activity failed. PGlite runs one transaction
 * at a time, so no two transactions ever hold row locks at once: the case needs a real server
 * (CI's store suite on the native PostgreSQL, SKILLSMITH_TEST_DATABASE_URL).
 */
describe.skipIf(isEmbeddedDatabaseUrl(database.url))('procedure row locks: one order for every writer', () => {
  const tenantId = 'locks';
  let ids: { low: string; middle: string; high: string };

  beforeAll(async () => {
    const skills = createSkillRepository({ pool: database.pool, defaultLicense: 'MIT' });
    const inserted: string[] = [];
    for (const name of ['first-skill', 'second-skill', 'third-skill']) {
      const skill = await skills.install(
        tenantId,
        {
          directoryName: name,
          files: new Map([
            [
              'SKILL.md',
              new TextEncoder().encode(`---\nname: ${name}\ndescription: A skill.\nmetadata:\n  version: 1.0.0\n---\n\n1. Do it.\n`),
            ],
          ]),
        },
        { source: 'operator' },
      );
      const procedure = await withTransaction(database.pool, (client) =>
        insertProcedure(client, tenantId, {
          skillId: skill.skillId,
          name,
          revision: 1,
          whenToUse: `When ${name} is wanted.`,
          toolSequence: [],
          toolsRequired: [],
          successCount: 1,
          attemptCount: 1,
          fromSessions: [],
          embedding: Float32Array.from([1, 0, 0]),
          embeddingModel: 'test/3d',
        }),
      );
      inserted.push(procedure.id);
    }
    const [low, middle, high] = [...inserted].sort();
    ids = { low: low!, middle: middle!, high: high! };
    // Rewritten rows move behind the untouched one: a scan now meets the highest id first.
    for (const id of [ids.low, ids.middle])
      await database.pool.query(`UPDATE procedures SET updated_at = now() WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
  });

  afterAll(async () => {
    await database.close();
  });

  it('a recall-use touch and a track record locking the same procedures at once both finish (no deadlock)', async () => {
    const connect = async () => {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      return client;
    };
    const [holder, tracker, toucher] = await Promise.all([connect(), connect(), connect()]);
    try {
      // The middle row is held, so the track record stops after the lowest and the touch runs into it.
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM procedures WHERE tenant_id = $1 AND id = $2 FOR UPDATE`, [tenantId, ids.middle]);
      await tracker.query('BEGIN');
      const tracked = lockProcedures(tracker as unknown as pg.PoolClient, tenantId, [ids.high, ids.middle, ids.low]).then(() =>
        tracker.query('COMMIT'),
      );
      const touched = touchProcedures(toucher as unknown as pg.PoolClient, tenantId, [ids.low, ids.middle, ids.high]);
      const settled = Promise.allSettled([tracked, touched]);
      await until(
        'both to wait on row locks',
        async () => {
          const { rows } = await holder.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
          );
          return rows[0]!.n >= 2 ? true : undefined;
        },
        { timeoutMs: 10_000, intervalMs: 20 },
      );
      await holder.query('COMMIT');
      const outcomes = await settled;
      expect(outcomes.map((outcome) => (outcome.status === 'rejected' ? String(outcome.reason) : 'ok'))).toEqual(['ok', 'ok']);
      const { rows } = await holder.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM procedures WHERE tenant_id = $1 AND last_used_at IS NOT NULL`,
        [tenantId],
      );
      expect(rows[0]!.n).toBe(3);
    } finally {
      await tracker.query('ROLLBACK').catch(() => undefined);
      await Promise.all([holder.end(), tracker.end(), toucher.end()]);
    }
  });
});
