/** Ids of stored runs per signal at most: a few KB, far below any payload limit. */
const MAX_RUNS_PER_SIGNAL = 500;

export interface StoredRun {
  tenantId: string;
  agentId: string;
  runId: string;
}

/** Sends one signal to an agent's intake carrying these run ids; resolves with the intake's workflow id. */
export type SendStoredRuns = (intake: { tenantId: string; agentId: string }, runIds: string[]) => Promise<string>;

interface Waiting {
  runId: string;
  resolve(workflowId: string): void;
  reject(error: Error): void;
}

/**
 * Tells each agent's intake about stored runs with as few Temporal round trips as the load
 * allows: while a signal to one intake is in flight, the runs stored for it meanwhile wait and go
 * together in the next signal. Under load that is one signalWithStart per agent per round trip
 * instead of one per run; alone, a run is signalled at once. Each caller's promise settles with
 * the signal that carried its run (a failure rejects every run of that signal).
 */
export function createCoalescedIntakeSignal(send: SendStoredRuns): (run: StoredRun) => Promise<string> {
  const queues = new Map<string, Waiting[]>();

  async function drain(key: string, intake: { tenantId: string; agentId: string }, queue: Waiting[]): Promise<void> {
    while (queue.length > 0) {
      const group = queue.splice(0, MAX_RUNS_PER_SIGNAL);
      try {
        const workflowId = await send(
          intake,
          group.map((entry) => entry.runId),
        );
        for (const { resolve } of group) resolve(workflowId);
      } catch (error) {
        for (const { reject } of group) reject(error as Error);
      }
    }
    queues.delete(key);
  }

  return ({ tenantId, agentId, runId }) =>
    new Promise((resolve, reject) => {
      const key = JSON.stringify([tenantId, agentId]);
      const queue = queues.get(key);
      if (queue) {
        queue.push({ runId, resolve, reject });
        return;
      }
      const started: Waiting[] = [{ runId, resolve, reject }];
      queues.set(key, started);
      void drain(key, { tenantId, agentId }, started);
    });
}
