import type { StackCheck } from '../src/app/runtime.ts';
import type { ActivityDependencies } from './dependencies.ts';

export type StackCheckResult = StackCheck;

/** Proves the worker reaches the database with the schema applied: used by `skillsmith up` and the smoke test. */
export const createStackCheckActivities = ({ pool }: ActivityDependencies) => ({
  async checkDatabase(): Promise<StackCheckResult> {
    const { rows } = await pool.query<{ server_version: string; vector: string | null; migrations: string }>(
      `SELECT current_setting('server_version') AS server_version,
              (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS vector,
              (SELECT count(*) FROM schema_migrations) AS migrations`,
    );
    const row = rows[0]!;
    return { serverVersion: row.server_version, vectorExtension: row.vector, migrations: Number(row.migrations) };
  },
});
