import type { Queryable } from '../store/database.ts';
import { hasProcedures } from './procedure-repository.ts';

/**
 * Whether a tenant has procedures, as the run intake's door asks it for every run (does any
 * review want this run?): answered from a short-lived cache instead of a query per request.
 *
 * Only a "no" can be wrong in a way that matters, and only for a moment. A cached "yes" sends a
 * run to the intake, whose `recordRuns` activity decides its review exactly as before (it asks
 * the database itself). A cached "no" keeps a run from its intake: it is believed for at most
 * PROCEDURE_PRESENCE_TTL_MS, and not at all once this process has installed a procedure for the
 * tenant (`noteProceduresInstalled`, called after the install committed — the worker of
 * `skillsmith up` runs in the API's process). So a run accepted while the tenant had no procedure
 * is not reviewed — it never was: the activity that decided it before also saw no procedure —
 * and the only runs a procedure's arrival can miss are those accepted within the TTL of an install
 * by a worker in another process, or in the instant between an install's commit and its note.
 * Those are runs that reached the door before the door could know of the procedure, which is what
 * "accepted before the first procedure exists" means for a door that does not lock the table.
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
