import type { Client } from '@temporalio/client';
import type pg from 'pg';
import { databaseFailure } from '../store/database-failure.ts';
import type { StorageFailureMemory } from './storage-failure-memory.ts';

/** One dependency the stack needs to serve: the database, Temporal, a worker on the task queue. */
export interface ReadinessCheck {
  name: 'database' | 'temporal' | 'worker';
  ok: boolean;
  detail: string;
}

export interface Readiness {
  ready: boolean;
  checks: ReadinessCheck[];
}

export interface ReadinessDependencies {
  pool: pg.Pool;
  temporal: () => Promise<Client>;
  namespace: string;
  taskQueue: string;
  /** Each check's own bound, so a hung dependency answers "not ready" instead of hanging the probe. */
  timeoutMs?: number;
  /**
   * Tries of a check before it says not ready (default 1): `skillsmith status`, a new process on a
   * possibly loaded machine, tries twice, so one slow connection does not read as an outage while a
   * real one (refused, failing again) still does.
   */
  attempts?: number;
  /** A poller seen longer ago than this no longer counts as a worker (Temporal keeps pollers listed for minutes). */
  pollerFreshnessMs?: number;
  /** Writes refused for want of disk: the database is not ready while one is recent, though SELECT 1 answers. */
  storageFailures?: StorageFailureMemory;
}

const WORKFLOW_TASK_QUEUE = 1; // temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW
const NORMAL_KIND = 1; // temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL

function within<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not answer within ${timeoutMs} ms`)), timeoutMs);
    }),
  ]).finally(() => clearTimeout(timer));
}

const reason = (error: unknown) => (error instanceof Error ? error.message : String(error)).split('\n')[0]!;

/**
 * The database answers `SELECT 1` within the bound, and no write was refused for want of disk
 * lately: /readyz's first check, and what /healthz reports beside liveness. Why not names the
 * stable code (`DatabaseUnavailable`, `StorageFull`) where the failure is the database's.
 */
export async function checkDatabase(pool: pg.Pool, timeoutMs: number, storageFailures?: StorageFailureMemory): Promise<ReadinessCheck> {
  try {
    await within(pool.query('SELECT 1'), timeoutMs, 'the database');
  } catch (error) {
    const failure = databaseFailure(error);
    return { name: 'database', ok: false, detail: failure ? `${failure.code}: ${reason(failure)}` : reason(error) };
  }
  const storage = storageFailures?.recent();
  if (storage) {
    const ago = Math.round(storage.ageMs / 1000);
    return {
      name: 'database',
      ok: false,
      detail: `${storage.failure.code}: ${reason(storage.failure)} (a write was refused ${ago} s ago)`,
    };
  }
  return { name: 'database', ok: true, detail: 'SELECT 1 answered' };
}

/**
 * What /readyz and `skillsmith status` report: the database answers `SELECT 1`, Temporal answers
 * for the namespace, and a worker has polled the task queue recently — each with why not.
 */
export function createReadiness(dependencies: ReadinessDependencies): () => Promise<Readiness> {
  const timeoutMs = dependencies.timeoutMs ?? 3_000;
  const freshnessMs = dependencies.pollerFreshnessMs ?? 70_000;
  const temporalAndWorker = async (): Promise<ReadinessCheck[]> => {
    const { namespace, taskQueue } = dependencies;
    let client: Client;
    try {
      client = await within(dependencies.temporal(), timeoutMs, 'Temporal');
      await within(client.workflowService.describeNamespace({ namespace }), timeoutMs, 'Temporal');
    } catch (error) {
      return [
        { name: 'temporal', ok: false, detail: reason(error) },
        { name: 'worker', ok: false, detail: 'unknown: Temporal does not answer' },
      ];
    }
    const temporal: ReadinessCheck = { name: 'temporal', ok: true, detail: `namespace ${namespace} answered` };
    try {
      const { pollers } = await within(
        client.workflowService.describeTaskQueue({
          namespace,
          taskQueue: { name: taskQueue, kind: NORMAL_KIND },
          taskQueueType: WORKFLOW_TASK_QUEUE,
        }),
        timeoutMs,
        'Temporal',
      );
      const now = Date.now();
      const fresh = (pollers ?? []).filter((poller) => {
        const seconds = Number(poller.lastAccessTime?.seconds ?? 0);
        return now - seconds * 1000 <= freshnessMs;
      });
      return [
        temporal,
        fresh.length > 0
          ? { name: 'worker', ok: true, detail: `${fresh.length} poller(s) on task queue ${taskQueue}` }
          : { name: 'worker', ok: false, detail: `no worker has polled task queue ${taskQueue} in the last ${freshnessMs / 1000} s` },
      ];
    } catch (error) {
      return [temporal, { name: 'worker', ok: false, detail: reason(error) }];
    }
  };
  const attempts = dependencies.attempts ?? 1;
  const tried = async (check: () => Promise<ReadinessCheck[]>) => {
    let checks = await check();
    for (let attempt = 1; attempt < attempts && !checks.every((one) => one.ok); attempt += 1) checks = await check();
    return checks;
  };
  return async () => {
    const checks = (
      await Promise.all([
        tried(async () => [await checkDatabase(dependencies.pool, timeoutMs, dependencies.storageFailures)]),
        tried(temporalAndWorker),
      ])
    ).flat();
    return { ready: checks.every((check) => check.ok), checks };
  };
}
