/** Ids of stored runs per signal at most: a few KB, far below any payload limit. */
const MAX_RUNS_PER_SIGNAL = 500;

export interface StoredRun {
  tenantId: string;
  agentId: string;
  runId: string;
}

/** Sends one signal to an agent's intake carrying these run ids (signalWithStart). */
export type SendStoredRuns = (intake: { tenantId: string; agentId: string }, runIds: string[]) => Promise<unknown>;

interface Waiting {
  agentId: string;
  runId: string;
  resolve(): void;
  reject(error: Error): void;
}

/**
 * Tells a tenant's intakes about stored runs with as few Temporal round trips as the load allows:
 * while a signal for a tenant is in flight, the runs stored for it meanwhile — of any of its
 * agents — wait and go together in the next signal, to the intake of the first of them. Under
 * load that is one signalWithStart per tenant per round trip instead of one per run (or per
 * agent), and one review batch as wide as the burst; alone, a run is signalled at once. Any
 * intake of the tenant can take any of its stored runs: `recordRuns` decides a stored run's review
 * by tenant and run id, never by agent. Each caller's promise settles with the signal that carried
 * its run (a failure rejects every run of that signal).
 */
export function createCoalescedIntakeSignal(send: SendStoredRuns): (run: StoredRun) => Promise<void> {
  const queues = new Map<string, Waiting[]>();

  async function drain(tenantId: string, queue: Waiting[]): Promise<void> {
    while (queue.length > 0) {
      const group = queue.splice(0, MAX_RUNS_PER_SIGNAL);
      try {
        await send(
          { tenantId, agentId: group[0]!.agentId },
          group.map((entry) => entry.runId),
        );
        for (const { resolve } of group) resolve();
      } catch (error) {
        for (const { reject } of group) reject(error as Error);
      }
    }
    queues.delete(tenantId);
  }

  return ({ tenantId, agentId, runId }) =>
    new Promise((resolve, reject) => {
      const queue = queues.get(tenantId);
      if (queue) {
        queue.push({ agentId, runId, resolve, reject });
        return;
      }
      const started: Waiting[] = [{ agentId, runId, resolve, reject }];
      queues.set(tenantId, started);
      void drain(tenantId, started);
    });
}
