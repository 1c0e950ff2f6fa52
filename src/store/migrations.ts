import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { withTransaction } from './database.ts';

export const schemaDirectory = fileURLToPath(new URL('../../schema/', import.meta.url));

const migrationFile = /^(\d{3})_[a-z0-9_]+\.sql$/;

/** The advisory lock every migrator of a database takes, so concurrent starts apply each file once. */
const MIGRATION_LOCK = 7305183;

export interface MigrationResult {
  applied: string[];
  alreadyApplied: string[];
}

/**
 * Applies `schema/NNN_*.sql` in order, each once, recording it in `schema_migrations`.
 * Migrations are additive only, so an applied file is never re-run or rolled back.
 */
export async function migrate(pool: pg.Pool, directory = schemaDirectory): Promise<MigrationResult> {
  // Under the lock too: concurrent `CREATE TABLE IF NOT EXISTS` on a fresh database is not safe in
  // PostgreSQL (both see no table, one fails on pg_type's unique index), and a scaled-out start —
  // compose's workers and APIs on an empty database at once — is exactly that.
  await withTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      name text PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
  });
  const files = (await readdir(directory)).filter((name) => migrationFile.test(name)).sort();
  const done = new Set((await pool.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((row) => row.name));
  const result: MigrationResult = { applied: [], alreadyApplied: [] };
  for (const file of files) {
    if (done.has(file)) {
      result.alreadyApplied.push(file);
      continue;
    }
    const sql = await readFile(`${directory}/${file}`, 'utf8');
    await withTransaction(pool, async (client) => {
      // Serialise concurrent migrators (several workers starting at once) on one advisory lock.
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      const again = await client.query('SELECT 1 FROM schema_migrations WHERE name = $1', [file]);
      // Another migrator applied it while this one waited for the lock.
      if (again.rowCount) {
        result.alreadyApplied.push(file);
        return;
      }
      await client.query(sql);
      await client.query('INSERT INTO schema_migrations (name) VALUES ($1)', [file]);
      result.applied.push(file);
    });
  }
  return result;
}
