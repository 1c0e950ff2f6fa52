/** Ids of stored runs per signal at most: a few KB, far below any payload limit. */
const MAX_RUNS_PER_SIGNAL = 500;

export interface StoredRun {
  tenantId: string;
  agentId: string;
  runId: string;
}

/** Sends one signal to an agent's intake carrying these run ids (signalWithStart); resolves with the intake's workflow id. */
export type SendStoredRuns = (intake: { tenantId: string; agentId: string }, runIds: string[]) => Promise<string>;

interface Waiting {
  agentId: string;
  runId: string;
  resolve(workflowId: string): void;
  reject(error: Error): void;
}

/**
 * Tells a tenant's intake about stored runs with as few Temporal round trips, and as few review
 * executions, as the load allows. All runs of a tenant go to one intake — the agent's of the first
 * run this process signalled for the tenant — and while a signal to it is in flight, the runs
 * stored meanwhile, of any of the tenant's agents, wait and go together in the next signal; alone,
 * a run is signalled at once. One intake per tenant also widens the reviews: the intake starts one
 * review per batch it takes, and takes everything signalled while it recorded the batch before, so
 * under load a review covers dozens of runs where an intake per agent started one for every few
 * (bench/results/2026-11-29-run-intake.md: 55 review executions for 591 reviews became 9). Any intake of the
 * tenant can take any of its stored runs: `recordRuns` decides a stored run's review by tenant and
 * run id, never by agent. Each caller's promise settles with the signal that carried its run — with
 * the id of the intake it went to — and a failure rejects every run of that signal.
 */
export function createCoalescedIntakeSignal(send: SendStoredRuns): (run: StoredRun) => Promise<string> {
  const queues = new Map<string, Waiting[]>();
  /** Per tenant, the agent whose intake takes its stored runs: the first this process signalled for. */
  const intakeAgents = new Map<string, string>();

  async function drain(tenantId: string, queue: Waiting[]): Promise<void> {
    while (queue.length > 0) {
      const group = queue.splice(0, MAX_RUNS_PER_SIGNAL);
      try {
        const workflowId = await send(
          { tenantId, agentId: intakeAgents.get(tenantId)! },
          group.map((entry) => entry.runId),
        );
        for (const { resolve } of group) resolve(workflowId);
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
      if (!intakeAgents.has(tenantId)) intakeAgents.set(tenantId, agentId);
      const started: Waiting[] = [{ agentId, runId, resolve, reject }];
      queues.set(tenantId, started);
      void drain(tenantId, started);
    });
}
