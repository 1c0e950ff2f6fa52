import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { startEmbeddedPostgres } from '../../src/infra/embedded-postgres.ts';
import { createPool } from '../../src/store/database.ts';
import { migrate } from '../../src/store/migrations.ts';

export interface TestDatabase {
  pool: pg.Pool;
  url: string;
  close(): Promise<void>;
}

/**
 * A fresh, migrated database for one test file: a new database on the native server named by
 * SKILLSMITH_TEST_DATABASE_URL (CI runs the store suite that way), else an in-process PGlite.
 */
export async function openTestDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.SKILLSMITH_TEST_DATABASE_URL;
  if (serverUrl) return openFreshDatabase(serverUrl);
  // The run's migrated database (test/support/global-setup.ts): a PGlite started from it skips
  // initdb and the migrations, seconds of CPU per file; migrate() below still checks it is current.
  // (vitest loaded here, not above: the benches import this module outside a test run.)
  const { inject } = await import('vitest');
  // 16 MB of shared buffers are plenty for a test's database (a page that does not fit is read back from the
  // in-memory files) and start in a fifth less CPU than PGlite's 128 MB.
  return openFreshDatabase(undefined, { template: new Blob([await readFile(inject('databaseTemplatePath'))]), sharedBuffers: '16MB' });
}

/**
 * A new, migrated database on the native server at `serverUrl`, or an in-process PGlite without
 * one, started from `template` (a dumped data directory) when given (tests, benches).
 */
export async function openFreshDatabase(
  serverUrl: string | undefined,
  options: { template?: Blob; sharedBuffers?: string } = {},
): Promise<TestDatabase> {
  if (serverUrl) return openNativeDatabase(serverUrl);
  const embedded = await startEmbeddedPostgres({
    ...(options.template ? { loadDataDir: options.template } : {}),
    ...(options.sharedBuffers ? { sharedBuffers: options.sharedBuffers } : {}),
  });
  const pool = createPool(embedded.url);
  await migrate(pool);
  return {
    pool,
    url: embedded.url,
    async close() {
      await pool.end();
      await embedded.stop();
    },
  };
}

async function openNativeDatabase(serverUrl: string): Promise<TestDatabase> {
  const name = `skillsmith_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const pool = createPool(url.toString());
  await migrate(pool);
  return {
    pool,
    url: url.toString(),
    async close() {
      await pool.end();
      const cleanup = new pg.Client({ connectionString: serverUrl });
      await cleanup.connect();
      await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await cleanup.end();
    },
  };
}

/** Rows a tenant holds in the skill tables: what a refused write must leave unchanged. */
export async function countSkillRows(pool: pg.Pool, tenantId: string): Promise<{ skills: number; revisions: number; packages: number }> {
  const { rows } = await pool.query<{ skills: number; revisions: number; packages: number }>(
    `SELECT (SELECT count(*) FROM skills WHERE tenant_id = $1)::int AS skills,
            (SELECT count(*) FROM skill_revisions WHERE tenant_id = $1)::int AS revisions,
            (SELECT count(*) FROM skill_packages WHERE tenant_id = $1)::int AS packages`,
    [tenantId],
  );
  return rows[0]!;
}
