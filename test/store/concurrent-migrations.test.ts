import { readdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNativePostgres, type NativePostgres } from '../../src/infra/native-postgres.ts';
import { freePort } from '../../src/infra/temporal-dev-server.ts';
import { createPool } from '../../src/store/database.ts';
import { migrate, schemaDirectory } from '../../src/store/migrations.ts';
import { createStackHome, type StackHome } from '../support/stack-home.ts';

/** As many migrators as docker-compose.yml starts at once (3 workers, 2 APIs). */
const MIGRATORS = 5;

/**
 * Scaled-out processes all migrate at start-up, and on a fresh database they start together. Run
 * against a native PostgreSQL (PGlite serves one connection at a time, so no race shows there): with
 * `schema_migrations` created outside the advisory lock, 22 of 50 such migrators failed with
 * `duplicate key value violates unique constraint "pg_type_typname_nsp_index"`.
 */
describe('migrate: concurrent migrators on a fresh database', () => {
  let stackHome: StackHome;
  let postgres: NativePostgres;

  beforeAll(async () => {
    stackHome = await createStackHome();
    postgres = await startNativePostgres({ home: stackHome.home, port: await freePort() });
  }, 120_000);

  afterAll(async () => {
    await postgres?.stop();
    await stackHome?.remove();
  });

  it('all succeed, and every migration is applied exactly once', async () => {
    const files = (await readdir(schemaDirectory)).filter((name) => /^\d{3}_.*\.sql$/.test(name)).sort();
    const admin = createPool(postgres.url);
    try {
      // Several fresh databases: the race is a matter of timing, one round could miss it.
      for (let round = 0; round < 4; round += 1) {
        const name = `fresh_${round}`;
        await admin.query(`CREATE DATABASE ${name}`);
        const url = new URL(postgres.url);
        url.pathname = `/${name}`;
        const pools = Array.from({ length: MIGRATORS }, () => createPool(url.toString()));
        try {
          const results = await Promise.all(pools.map((pool) => migrate(pool)));
          // Each file applied by one migrator, the others finding it done.
          expect(results.flatMap((result) => result.applied).sort()).toEqual(files);
          for (const result of results) expect([...result.applied, ...result.alreadyApplied].sort()).toEqual(files);
          const { rows } = await pools[0]!.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name');
          expect(rows.map((row) => row.name)).toEqual(files);
        } finally {
          await Promise.all(pools.map((pool) => pool.end()));
        }
      }
    } finally {
      await admin.end();
    }
  }, 120_000);
});
