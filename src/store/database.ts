import pg from 'pg';

export type Queryable = pg.Pool | pg.PoolClient;

/**
 * A connection pool. Vectors travel as pgvector text (`pgvector.toSql` in, `::text` +
 * `pgvector.fromSql` out), so no per-connection type registration is needed.
 */
export function createPool(url: string, options: { max?: number } = {}): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 8 });
  // An idle client losing its connection (server restart) must not crash the process.
  pool.on('error', () => undefined);
  return pool;
}

/**
 * Runs `fn` inside BEGIN/COMMIT on one client, rolling back on any error.
 * Keep the body short: the embedded database runs one transaction at a time.
 */
export async function withTransaction<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
