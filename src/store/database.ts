import pg from 'pg';
import pgvector from 'pgvector/pg';

export type Queryable = pg.Pool | pg.PoolClient;

/** A connection pool whose clients understand the pgvector `vector` type. */
export function createPool(url: string, options: { max?: number } = {}): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 8 });
  pool.on('connect', (client) => {
    // The type is looked up per connection; before the first migration it may not exist yet.
    client.on('error', () => undefined);
    void pgvector.registerTypes(client).catch(() => undefined);
  });
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
