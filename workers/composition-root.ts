import { Client, Connection } from '@temporalio/client';
import type { Runtime, RunningWorker } from '../src/cli/context.ts';
import type { Config } from '../src/config.ts';
import type { Logger } from '../src/logger.ts';
import { createPool } from '../src/store/database.ts';
import { migrate } from '../src/store/migrations.ts';
import type { StackCheckResult } from '../activities/stack-check.ts';
import { createWorker } from './worker.ts';

/**
 * The one place that builds real dependencies (pool, config, logger; later the embedder and the
 * LLM client) and hands them to the worker. Everything else receives them.
 */
export function createRuntime(config: Config, logger: Logger): Runtime {
  return {
    async startWorker({ temporalAddress, databaseUrl }): Promise<RunningWorker> {
      const pool = createPool(databaseUrl);
      await migrate(pool);
      const { worker, connection } = await createWorker({
        address: temporalAddress,
        namespace: config.temporal.namespace,
        taskQueue: config.temporal.taskQueue,
        dependencies: { pool, config, logger },
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

    async checkStack({ temporalAddress }): Promise<StackCheckResult> {
      const connection = await Connection.connect({ address: temporalAddress });
      try {
        const client = new Client({ connection, namespace: config.temporal.namespace });
        return await client.workflow.execute('stackCheck', {
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
