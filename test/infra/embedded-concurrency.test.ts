import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/infra/embedded-postgres.ts';

/**
 * The embedded (PGlite) fallback under concurrent connections: several pools of several
 * connections each, as `up`'s API and worker and a CLI command open them, each running its own
 * parameterised statements and transactions at once. pglite-socket's server queued single
 * protocol messages, so one connection's Bind landed on another's Parse ("bind message supplies
 * 2 parameters, but prepared statement "" requires 1") and rows went to the wrong caller.
 */
describe('embedded database under concurrent connections', () => {
  let database: EmbeddedPostgres;

  beforeAll(async () => {
    database = await startEmbeddedPostgres({ maxWaitMs: 1_500 });
    const setup = new pg.Client({ connectionString: database.url });
    await setup.connect();
    await setup.query('CREATE TABLE tenant_rows (tenant text NOT NULL, n int NOT NULL)');
    // Tenant t<k> holds k rows: a count answered for the wrong tenant shows.
    await setup.query("INSERT INTO tenant_rows SELECT 't' || k, n FROM generate_series(1, 8) k, generate_series(1, k) n");
    await setup.query('CREATE TABLE ledger (pool int NOT NULL, value int NOT NULL)');
    await setup.end();
  });
  afterAll(async () => {
    await database.stop();
  });

  it('answers every statement of 4 pools × 4 connections correctly', async () => {
    const pools = Array.from({ length: 4 }, () => new pg.Pool({ connectionString: database.url, max: 4 }));
    const wrong: string[] = [];
    const check = (label: string, actual: unknown, expected: unknown) => {
      if (JSON.stringify(actual) !== JSON.stringify(expected))
        wrong.push(`${label}: ${JSON.stringify(actual)} ≠ ${JSON.stringify(expected)}`);
    };
    const work = pools.flatMap((pool, p) =>
      Array.from({ length: 30 }, async (_, i) => {
        switch ((i + p) % 4) {
          case 0: {
            const { rows } = await pool.query<{ v: number }>('SELECT $1::int * 2 AS v', [i]);
            check(`double ${i}`, rows, [{ v: i * 2 }]);
            break;
          }
          case 1: {
            const { rows } = await pool.query<{ v: string }>("SELECT $1::text || '/' || $2::text AS v", [`p${p}`, `i${i}`]);
            check(`concat ${p}/${i}`, rows, [{ v: `p${p}/i${i}` }]);
            break;
          }
          case 2: {
            const k = (i % 8) + 1;
            const { rows } = await pool.query<{ count: number }>('SELECT count(*)::int AS count FROM tenant_rows WHERE tenant = $1', [
              `t${k}`,
            ]);
            check(`count t${k}`, rows, [{ count: k }]);
            break;
          }
          default: {
            // A transaction reads its own write and nobody else's.
            const client = await pool.connect();
            try {
              await client.query('BEGIN');
              await client.query('INSERT INTO ledger (pool, value) VALUES ($1, $2)', [p, i]);
              const { rows } = await client.query<{ n: number }>('SELECT n FROM generate_series(1, $1::int) n', [i + 1]);
              check(`series ${i + 1}`, rows.length, i + 1);
              await client.query('COMMIT');
            } finally {
              client.release();
            }
          }
        }
      }),
    );
    const outcomes = await Promise.allSettled(work);
    await Promise.all(pools.map((pool) => pool.end()));
    const failures = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [String(outcome.reason)] : []));
    expect(failures).toEqual([]);
    expect(wrong).toEqual([]);
    const check2 = new pg.Client({ connectionString: database.url });
    await check2.connect();
    const { rows } = await check2.query<{ n: number }>('SELECT count(*)::int AS n FROM ledger');
    await check2.end();
    expect(rows[0]!.n).toBe(outcomes.length / 4);
  });

  it('refuses a connection that waits too long with SQLSTATE 53300 and a reason', async () => {
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    await holder.query('BEGIN');
    const waiter = new pg.Client({ connectionString: database.url });
    waiter.on('error', () => undefined);
    try {
      const refused = await waiter
        .connect()
        .then(() => waiter.query('SELECT 1'))
        .then(
          () => undefined,
          (error: Error & { code?: string }) => error,
        );
      expect(refused?.code).toBe('53300');
      expect(refused?.message).toMatch(/one connection at a time.*SKILLSMITH_EMBEDDED_DATABASE=native/);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
  });

  it('rolls back what a vanished connection left open, so the next one is not inside its transaction', async () => {
    const leaver = new pg.Client({ connectionString: database.url });
    leaver.on('error', () => undefined);
    await leaver.connect();
    await leaver.query('BEGIN');
    await leaver.query('INSERT INTO ledger (pool, value) VALUES (99, 99)');
    (leaver as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    const next = new pg.Client({ connectionString: database.url });
    await next.connect();
    try {
      const { rows } = await next.query<{ n: number }>('SELECT count(*)::int AS n FROM ledger WHERE pool = 99');
      expect(rows[0]!.n).toBe(0);
      // Outside a transaction, this fails ("no transaction in progress" is only a warning); inside one it would not be visible.
      await next.query('BEGIN');
      await next.query('COMMIT');
    } finally {
      await next.end();
    }
  });
  it('keeps nothing of what it served: 40 MB of rows through one connection leave the heap as it was', async () => {
    // PGlite's execProtocolRaw parses every answer message and keeps it in a list nothing empties:
    // a long-running embedded stack grew with every row it served, and paid the parsing in CPU.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const serve = async () => {
        for (let i = 0; i < 200; i++) await client.query("SELECT repeat('x', 20000) FROM generate_series(1, 10)");
      };
      await serve();
      gc();
      const before = process.memoryUsage().heapUsed;
      await serve();
      gc();
      expect(process.memoryUsage().heapUsed - before).toBeLessThan(10_000_000);
    } finally {
      await client.end();
    }
  });
});
