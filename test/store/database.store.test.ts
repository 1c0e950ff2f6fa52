import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { EMBEDDED_APPLICATION_NAME, isEmbeddedDatabase } from '../../src/store/database.ts';

// Recall names its statement (planned once per connection) only when the pool is not the
// embedded PGlite, whose connections share one backend session (a second PREPARE of the name fails).
describe('isEmbeddedDatabase', () => {
  const embeddedUrl = `postgresql://postgres:postgres@127.0.0.1:1/postgres?sslmode=disable&application_name=${EMBEDDED_APPLICATION_NAME}`;
  const nativeUrl = 'postgresql://postgres@127.0.0.1:1/postgres';

  it('tells a pool on the embedded server from one on a real server', async () => {
    const embedded = new pg.Pool({ connectionString: embeddedUrl });
    const native = new pg.Pool({ connectionString: nativeUrl });
    expect(isEmbeddedDatabase(embedded)).toBe(true);
    expect(isEmbeddedDatabase(native)).toBe(false);
    await Promise.all([embedded.end(), native.end()]);
  });

  it('tells a pooled client of either apart the same way', () => {
    // A pooled client is a pg.Client; no connection is needed to read its parameters.
    expect(isEmbeddedDatabase(new pg.Client({ connectionString: embeddedUrl }) as pg.PoolClient)).toBe(true);
    expect(isEmbeddedDatabase(new pg.Client({ connectionString: nativeUrl }) as pg.PoolClient)).toBe(false);
  });
});
