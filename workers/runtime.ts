import type { Runtime, RunningWorker, StackCheck } from '../src/app/runtime.ts';
import type { Config } from '../src/app/config.ts';
import { temporalConnectionOptions } from '../src/app/temporal-environment.ts';
import type { Logger } from '../src/logging/logger.ts';
import type { stackCheck } from '../workflows/stack-check.ts';

/** Where the worker's Temporal SDK metrics are served, when a port is configured. */
export function workerMetricsAddress(config: Config): string | undefined {
  const { workerHost, workerPort } = config.metrics;
  if (workerPort === undefined) return undefined;
  return `${workerHost.includes(':') ? `[${workerHost}]` : workerHost}:${workerPort}`;
}

/**
 * The worker side of the process: a worker over the application services (src/app) and the
 * stack check. The entry point hands it to the CLI. The embedder loads on first use (once per
 * process), so a worker starts even before the model is in place; the step that needs it then
 * fails loudly with the reason. Temporal's worker and client load on first use too: the CLI
 * creates this runtime for every command, and most never start a worker.
 */
export function createWorkerRuntime(config: Config, logger: Logger): Runtime {
  return {
    async startWorker({ temporalAddress, databaseUrl, config: workerConfig = config }): Promise<RunningWorker> {
      const [{ createPool }, { migrate }, { createServices }, { createWorker }] = await Promise.all([
        import('../src/store/database.ts'),
        import('../src/store/migrations.ts'),
        import('../src/app/services.ts'),
        import('./worker.ts'),
      ]);
      const pool = createPool(databaseUrl);
      await migrate(pool);
      const { worker, connection } = await createWorker({
        address: temporalAddress,
        access: temporalConnectionOptions(workerConfig.temporal, temporalAddress),
        namespace: workerConfig.temporal.namespace,
        taskQueue: workerConfig.temporal.taskQueue,
        dependencies: createServices(workerConfig, pool, { logger }),
        metricsBindAddress: workerMetricsAddress(workerConfig),
      });
      const done = worker.run().finally(async () => {
        await connection.close();
        await pool.end();
      });
      return {
        done,
        async shutdown() {
          if (worker.getState() === 'RUNNING') worker.shutdown();
          await done;
        },
      };
    },

    async checkStack({ temporalAddress }): Promise<StackCheck> {
      const { Client, Connection } = await import('@temporalio/client');
      const connection = await Connection.connect(temporalConnectionOptions(config.temporal, temporalAddress));
      try {
        const client = new Client({ connection, namespace: config.temporal.namespace });
        return await client.workflow.execute<typeof stackCheck>('stackCheck', {
          taskQueue: config.temporal.taskQueue,
          workflowId: `stack-check/${new Date().toISOString()}`,
          workflowExecutionTimeout: '2 minutes',
        });
      } finally {
        await connection.close();
      }
    },
  };
}
