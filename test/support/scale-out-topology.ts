import { spawn, type ChildProcess } from 'node:child_process';
import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { RunReport } from '../../src/runs/run-report.ts';
import { childEnvironment } from './child-environment.ts';
import { killProcess, startWorkerProcess } from './pass-faults.ts';
import { until } from './until.ts';

const bin = fileURLToPath(new URL('../../bin/skillsmith.js', import.meta.url));

/**
 * docker-compose.yml's topology without containers, as docs/operations.md's recipe runs it: one
 * Temporal, one PostgreSQL, `skillsmith api` and `skillsmith worker` processes on one task queue,
 * each a real process of the compiled bin with the compose file's variables. Shared by
 * test/faults/scale-out.test.ts and bench/scale-out.ts.
 */
/** The recipe's process counts: docker-compose.yml's replicas, what the test and the bench start. */
export const SCALE_OUT = { apis: 2, workers: 3 } as const;

export interface ScaleOutTopology {
  apis: Array<{ url: string; process: ChildProcess }>;
  workers: ChildProcess[];
  /** A worker's Temporal identity (the SDK's default, `pid@host`): how history names who ran what. */
  identityOf(worker: ChildProcess): string;
  stop(): Promise<void>;
}

/** `skillsmith api --json` on a free port: resolved with its URL once it listens. */
function startApiProcess(env: Record<string, string>): Promise<{ url: string; process: ChildProcess }> {
  const child = spawn(process.execPath, [bin, 'api', '--json'], {
    env: childEnvironment({ NODE_NO_WARNINGS: '1', SKILLSMITH_API_PORT: '0', ...env }),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((done, failed) => {
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      try {
        done({ url: (JSON.parse(stdout) as { url: string }).url, process: child });
      } catch {
        // Not the whole document yet.
      }
    });
    child.once('exit', (code) => failed(new Error(`skillsmith api exited ${code} before it listened`)));
  });
}

export async function startScaleOutTopology(options: {
  env: Record<string, string>;
  apis: number;
  workers: number;
}): Promise<ScaleOutTopology> {
  const workers = Array.from({ length: options.workers }, () => startWorkerProcess(options.env));
  const apis = await Promise.all(Array.from({ length: options.apis }, () => startApiProcess(options.env)));
  return {
    apis,
    workers,
    identityOf: (worker) => `${worker.pid}@${hostname()}`,
    async stop() {
      await Promise.all([...workers, ...apis.map((api) => api.process)].map((child) => killProcess(child)));
    },
  };
}

/**
 * Posts every run to the APIs in turn (`POST /v1/runs`, the token's tenant), `concurrency` at a
 * time; each must be answered 202 (stored). Returns how many each API took.
 */
export async function postRuns(
  apis: readonly { url: string }[],
  token: string,
  runs: readonly RunReport[],
  concurrency = 8,
): Promise<number[]> {
  const taken = apis.map(() => 0);
  let next = 0;
  const send = async () => {
    for (let index = next++; index < runs.length; index = next++) {
      const api = index % apis.length;
      const { tenantId: _tenantId, ...report } = runs[index]!;
      const response = await fetch(`${apis[api]!.url}/v1/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(report),
      });
      if (response.status !== 202)
        throw new Error(`POST /v1/runs to ${apis[api]!.url} answered ${response.status}: ${await response.text()}`);
      taken[api]! += 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, send));
  return taken;
}

/** The workflows of a pass: the pass itself and every cluster child it started so far. */
async function passExecutions(client: Client, handle: WorkflowHandle): Promise<WorkflowHandle[]> {
  const history = await handle.fetchHistory();
  const children = (history.events ?? []).flatMap((event) => {
    const started = event.childWorkflowExecutionStartedEventAttributes?.workflowExecution;
    return started?.workflowId ? [client.workflow.getHandle(started.workflowId, started.runId ?? undefined)] : [];
  });
  return [handle, ...children];
}

/**
 * How many activities each worker identity ran in a pass and its cluster children, from Temporal's
 * history (an activity's started event names the worker that ran it).
 */
export async function activitiesByWorker(client: Client, handle: WorkflowHandle): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const execution of await passExecutions(client, handle)) {
    for (const event of (await execution.fetchHistory()).events ?? []) {
      const identity = event.activityTaskStartedEventAttributes?.identity;
      if (identity) counts.set(identity, (counts.get(identity) ?? 0) + 1);
    }
  }
  return counts;
}

/** Waits until every one of `identities` has run an activity of the pass; resolves with the counts so far. */
export function untilEachRanActivities(
  client: Client,
  handle: WorkflowHandle,
  identities: readonly string[],
  timeoutMs: number,
): Promise<Map<string, number>> {
  return until(
    `each of ${identities.length} workers to run an activity of the pass`,
    async () => {
      const counts = await activitiesByWorker(client, handle);
      return identities.every((identity) => (counts.get(identity) ?? 0) > 0) ? counts : undefined;
    },
    { timeoutMs, intervalMs: 500, retryErrors: true },
  );
}
