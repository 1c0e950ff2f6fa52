import { Client, Connection } from '@temporalio/client';
import type pg from 'pg';
import type { Runtime, RunningWorker } from '../src/cli/context.ts';
import type { Config } from '../src/config.ts';
import type { Logger } from '../src/logger.ts';
import { createSkillManage } from '../src/authoring/skill-manage.ts';
import { createEmbedder } from '../src/embedding/embedder.ts';
import { createConfiguredChatClient } from '../src/llm/configured-chat-client.ts';
import { createPool } from '../src/store/database.ts';
import { migrate } from '../src/store/migrations.ts';
import { createSkillRepository } from '../src/store/skill-repository.ts';
import { createConfiguredDistiller } from '../src/synthesis/distiller-choice.ts';
import type { ActivityDependencies } from '../activities/dependencies.ts';
import type { StackCheckResult } from '../activities/stack-check.ts';
import type { stackCheck } from '../workflows/stack-check.ts';
import { createWorker } from './worker.ts';

/**
 * The activities' real dependencies over one pool. The embedder loads on first use (once per
 * process), so a worker starts even before the model is in place; the step that needs it then
 * fails loudly with the reason.
 */
export function createActivityDependencies(pool: pg.Pool, config: Config, logger: Logger): ActivityDependencies {
  const skills = createSkillRepository({ pool, defaultLicense: config.skillLicense });
  return {
    pool,
    config,
    logger,
    skills,
    skillManage: createSkillManage({
      pool,
      repository: skills,
      defaultLicense: config.skillLicense,
      settings: { enabled: config.authoring.enabled, approvalProfile: config.authoring.approvalProfile },
    }),
    embedder: () => createEmbedder(config.embedding),
    distiller: () => createConfiguredDistiller(config),
    reviewer: () => createConfiguredChatClient(config, 'SKILLSMITH_REVIEW_ENABLED=true'),
  };
}

/**
 * The one place that builds real dependencies (pool, config, logger, embedder, distiller)
 * and hands them to the worker. Everything else receives them.
 */
export function createRuntime(config: Config, logger: Logger): Runtime {
  return {
    async startWorker({ temporalAddress, databaseUrl, config: workerConfig = config }): Promise<RunningWorker> {
      const pool = createPool(databaseUrl);
      await migrate(pool);
      const { worker, connection } = await createWorker({
        address: temporalAddress,
        namespace: workerConfig.temporal.namespace,
        taskQueue: workerConfig.temporal.taskQueue,
        dependencies: createActivityDependencies(pool, workerConfig, logger),
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
