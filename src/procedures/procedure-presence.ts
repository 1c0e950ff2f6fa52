import type { Queryable } from '../store/database.ts';
import { hasProcedures } from './procedure-repository.ts';

/**
 * Whether a tenant has procedures, as the run intake's door asks it for every run (does any
 * review want this run?): answered from a short-lived cache instead of a query per request.
 *
 * Only a "no" can be wrong in a way that matters, and only for a moment. A cached "yes" sends a
 * run to the intake, whose `recordRuns` activity decides its review exactly as before (it asks
 * the database itself). A cached "no" keeps a run from its intake: it is believed for at most
 * PROCEDURE_PRESENCE_TTL_MS, and not at all once this process has noted an install for the tenant
 * (`noteProceduresInstalled`, called after the install committed; the worker of `skillsmith up`
 * runs in the API's process).
 *
 * The race with a pass installing the tenant's first procedure is the one the intake always had,
 * moved earlier. Before, the activity asked when it got to the run — milliseconds to seconds after
 * the 202, as the intake's queue allowed — so whether a run stored just before the install was
 * reviewed depended on that delay. Now the door asks right after storing the run: a run accepted
 * before the first procedure exists is not reviewed (it needs none: nothing was there for it to
 * use), and one accepted after is, except within the TTL after an install by a worker in another
 * process, or in the instant between an install's commit and its note here. Those runs reached the
 * door before it could know of the procedure; the first pass after them learns from them as from
 * any run, and the track record starts with the runs after.
 */

/** How long an answer is believed; at most one presence query per tenant and interval per process. */
export const PROCEDURE_PRESENCE_TTL_MS = 1_000;

/** Per tenant, how many installs this process has noted: an answer read before the latest is not believed. */
const installsNoted = new Map<string, number>();

/** Tells every presence cache of this process that the tenant may have procedures now (after the install committed). */
export function noteProceduresInstalled(tenantId: string): void {
  installsNoted.set(tenantId, (installsNoted.get(tenantId) ?? 0) + 1);
}

export interface ProcedurePresence {
  /** Whether the tenant had procedures at most the TTL ago (and no install was noted since). */
  has(tenantId: string): Promise<boolean>;
}

interface Answer {
  installsNoted: number;
  readAt: number;
  present: Promise<boolean>;
}

export function createProcedurePresence(db: Queryable, options: { ttlMs?: number; now?: () => number } = {}): ProcedurePresence {
  const ttlMs = options.ttlMs ?? PROCEDURE_PRESENCE_TTL_MS;
  const now = options.now ?? Date.now;
  const answers = new Map<string, Answer>();
  return {
    has(tenantId) {
      const noted = installsNoted.get(tenantId) ?? 0;
      const cached = answers.get(tenantId);
      if (cached && cached.installsNoted === noted && now() - cached.readAt < ttlMs) return cached.present;
      // Requests arriving while the query runs share it; its age counts from when it was sent.
      const answer: Answer = { installsNoted: noted, readAt: now(), present: hasProcedures(db, tenantId) };
      answers.set(tenantId, answer);
      // A failed query is not remembered: the next request asks again.
      answer.present.catch(() => {
        if (answers.get(tenantId) === answer) answers.delete(tenantId);
      });
      return answer.present;
    },
  };
}
