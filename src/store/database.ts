import pg from 'pg';

export type Queryable = pg.Pool | pg.PoolClient;

/** The application name in the embedded server's URL: how a pool knows it talks to PGlite. */
export const EMBEDDED_APPLICATION_NAME = 'skillsmith-embedded';

export function isEmbeddedDatabaseUrl(url: string): boolean {
  try {
    return new URL(url).searchParams.get('application_name') === EMBEDDED_APPLICATION_NAME;
  } catch {
    return false;
  }
}

/**
 * Whether `db` talks to the embedded PGlite: its socket server runs every connection in one
 * backend session, where a second connection's PREPARE of an already prepared name fails, so
 * statements are named (planned once per connection) only against a real server.
 */
export function isEmbeddedDatabase(db: Queryable): boolean {
  if (db instanceof pg.Pool) return isEmbeddedDatabaseUrl(db.options.connectionString ?? '');
  // A pooled client: pg keeps the parsed URL's parameters on it (not in @types/pg).
  const parameters = (db as pg.PoolClient & { connectionParameters?: { application_name?: string } }).connectionParameters;
  return parameters?.application_name === EMBEDDED_APPLICATION_NAME;
}

/**
 * A connection pool. Vectors travel as pgvector text (`pgvector.toSql` in, `::text` +
 * `pgvector.fromSql` out), so no per-connection type registration is needed; recall's query
 * vector, on the latency path, goes in binary (`vectorParameter`). Against the
 * embedded PGlite the pool holds one connection: its socket server interleaves the protocol
 * messages of concurrent connections ("unnamed prepared statement does not exist", a bind
 * landing on another connection's parse), and it runs one statement at a time anyway.
 */
export function createPool(url: string, options: { max?: number } = {}): pg.Pool {
  const max = isEmbeddedDatabaseUrl(url) ? 1 : (options.max ?? 8);
  // A filtered HNSW scan (recall: one tenant's vectors) keeps reading the index until its LIMIT is
  // met instead of stopping at ef_search candidates (pgvector ≥ 0.8), set once per connection.
  const pool = new pg.Pool({ connectionString: url, max, options: '-c hnsw.iterative_scan=relaxed_order' });
  // A client losing its connection (the server killed or restarted) must not crash the process:
  // pg emits 'error' on the pool for an idle client and on the client itself for a checked-out one
  // (inside a transaction), where nothing else listens. Either way the query in hand rejects with
  // the error (databaseFailure names it), and pg-pool discards the client when it is released.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/**
 * Runs `fn` inside BEGIN/COMMIT on one client, rolling back on any error.
 * Keep the body short: the embedded database runs one transaction at a time.
 */
export async function withTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
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
