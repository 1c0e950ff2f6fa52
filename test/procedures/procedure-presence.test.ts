import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProcedurePresence, noteProceduresInstalled } from '../../src/procedures/procedure-presence.ts';
import type { Queryable } from '../../src/store/database.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { insertTestProcedure } from '../support/procedures.ts';

/** The intake door's cached "does this tenant have procedures?": one query per tenant and TTL, a "no" dropped when an install is noted. */
describe('procedure presence', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await openTestDatabase();
  });
  afterAll(async () => {
    await database?.close();
  });

  /** The pool, counting the queries sent through it. */
  const counted = () => {
    const counter = { queries: 0, db: undefined as unknown as Queryable };
    counter.db = {
      query: (...args: unknown[]) => ((counter.queries += 1), (database.pool.query as (...a: unknown[]) => unknown)(...args)),
    } as Queryable;
    return counter;
  };

  const installProcedure = (tenantId: string) => insertTestProcedure(database.pool, tenantId);

  it('asks once per tenant and TTL, concurrent requests sharing the query, and again once the TTL is over', async () => {
    let clock = 0;
    const counter = counted();
    const presence = createProcedurePresence(counter.db, { ttlMs: 1_000, now: () => clock });
    expect(await Promise.all([presence.has('presence-ttl'), presence.has('presence-ttl'), presence.has('presence-ttl')])).toEqual([
      false,
      false,
      false,
    ]);
    expect(counter.queries).toBe(1);
    await installProcedure('presence-ttl');
    clock = 999;
    // Installed behind this process's back (another process's worker): believed "no" until the TTL is over.
    expect(await presence.has('presence-ttl')).toBe(false);
    expect(counter.queries).toBe(1);
    clock = 1_000;
    expect(await presence.has('presence-ttl')).toBe(true);
    expect(counter.queries).toBe(2);
    // Another tenant is asked for on its own.
    expect(await presence.has('presence-other')).toBe(false);
    expect(counter.queries).toBe(3);
  });

  it('asks again at once when this process notes an install for the tenant, whatever the TTL', async () => {
    const counter = counted();
    const presence = createProcedurePresence(counter.db, { ttlMs: 600_000 });
    expect(await presence.has('presence-noted')).toBe(false);
    await installProcedure('presence-noted');
    expect(await presence.has('presence-noted')).toBe(false);
    noteProceduresInstalled('presence-noted');
    expect(await presence.has('presence-noted')).toBe(true);
    expect(counter.queries).toBe(2);
    // A note for another tenant does not drop this one's answer.
    noteProceduresInstalled('presence-elsewhere');
    expect(await presence.has('presence-noted')).toBe(true);
    expect(counter.queries).toBe(2);
  });

  it('does not remember a failed query: the next request asks again', async () => {
    let fail = true;
    const db = {
      query: (...args: unknown[]) =>
        fail ? Promise.reject(new Error('database down')) : (database.pool.query as (...a: unknown[]) => unknown)(...args),
    } as Queryable;
    const presence = createProcedurePresence(db, { ttlMs: 600_000 });
    await expect(presence.has('presence-failing')).rejects.toThrow('database down');
    fail = false;
    expect(await presence.has('presence-failing')).toBe(false);
  });
});
