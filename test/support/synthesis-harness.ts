import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import type { NativeConnection, Worker } from '@temporalio/worker';
import { inject } from 'vitest';
import { startSynthesisPass } from '../../src/client/synthesis-client.ts';
import { loadConfig, type Config } from '../../src/app/config.ts';
import type { Logger } from '../../src/logging/logger.ts';
import { runReportSchema, type RunReport } from '../../src/runs/run-report.ts';
import { upsertRuns } from '../../src/runs/run-repository.ts';
import type { PassRecord } from '../../src/contracts/pass-record.ts';
import { createServices, type Services } from '../../src/app/services.ts';
import { createWorker } from '../../workers/worker.ts';
import type { TestDatabase } from './database.ts';
import { testModelSettings } from './test-model.ts';
import { defaultRecallThreshold } from '../../src/recall/recall-threshold.ts';
import { testEmbeddingModel } from '../../src/embedding/model-pull.ts';

/** Config for a pass over the real test model, with the LLM (when given) at a scripted loopback server. */
export function synthesisTestConfig(overrides: {
  llmBaseUrl?: string;
  taskQueue: string;
  synthesis?: Partial<Config['synthesis']>;
}): Config {
  const base = loadConfig({});
  return {
    ...base,
    temporal: { ...base.temporal, address: inject('temporalAddress'), taskQueue: overrides.taskQueue },
    embedding: testModelSettings(),
    synthesis: {
      ...base.synthesis,
      // all-MiniLM-L6-v2 places paraphrases lower than nomic does (bench/results/2026-11-29-linkage-choice.md)
      similarityTau: 0.6,
      distiller: overrides.llmBaseUrl ? 'llm' : 'extractive',
      ...overrides.synthesis,
    },
    recall: { ...base.recall, threshold: defaultRecallThreshold(testEmbeddingModel.modelId)! },
    llm: { ...base.llm, baseUrl: overrides.llmBaseUrl, model: 'scripted', timeoutMs: 10_000 },
  };
}

export interface SynthesisHarness {
  client: Client;
  config: Config;
  logger: Logger;
  logLines: string[];
  /** The services the worker's activities run over. */
  services: Services;
  worker: Worker;
  runPass(options?: { full?: boolean; tenantId?: string }): Promise<{ handle: WorkflowHandle; record: PassRecord }>;
  startPass(options?: { full?: boolean; tenantId?: string }): Promise<WorkflowHandle>;
  close(): Promise<void>;
}

/** A worker over the real dependencies (test model, test database, scripted LLM), running in this process. */
export async function startSynthesisHarness(database: TestDatabase, config: Config): Promise<SynthesisHarness> {
  const logLines: string[] = [];
  const { pino } = await import('pino');
  const logger = pino({ level: 'info' }, { write: (line: string) => logLines.push(line) }) as unknown as Logger;
  const connection = await Connection.connect({ address: config.temporal.address! });
  const client = new Client({ connection });
  const services = createServices(config, database.pool, { logger });
  const { worker, connection: workerConnection }: { worker: Worker; connection: NativeConnection } = await createWorker({
    address: config.temporal.address!,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    dependencies: services,
    workflowBundlePath: inject('workflowBundlePath'),
  });
  const running = worker.run();
  let passes = 0;
  const startPass = async (options: { full?: boolean; tenantId?: string } = {}) =>
    startSynthesisPass(client, {
      tenantId: options.tenantId ?? 'default',
      full: options.full ?? false,
      taskQueue: config.temporal.taskQueue,
      // Distinct ids even when two passes start in the same millisecond.
      now: new Date(Date.now() + passes++),
    });
  return {
    client,
    config,
    logger,
    logLines,
    services,
    worker,
    startPass,
    async runPass(options = {}) {
      const handle = await startPass(options);
      return { handle, record: (await handle.result()) as PassRecord };
    },
    async close() {
      worker.shutdown();
      await running;
      await workerConnection.close();
      await connection.close();
    },
  };
}

/** The settings a `skillsmith` child process needs to work on this harness: its database, Temporal, task queue and the test model. */
export function cliEnvironment(
  database: TestDatabase,
  harness: SynthesisHarness,
  overrides: Record<string, string> = {},
): Record<string, string> {
  return {
    DATABASE_URL: database.url,
    TEMPORAL_ADDRESS: harness.config.temporal.address!,
    TEMPORAL_TASK_QUEUE: harness.config.temporal.taskQueue,
    SKILLSMITH_EMBEDDING_MODEL: harness.config.embedding.model,
    SKILLSMITH_EMBEDDING_PREFIXES: harness.config.embedding.prefixes,
    SKILLSMITH_MODEL_DIR: harness.config.embedding.modelDir,
    SKILLSMITH_SIMILARITY_TAU: String(harness.config.synthesis.similarityTau),
    NODE_NO_WARNINGS: '1',
    ...overrides,
  };
}

/** Run reports for one task, phrased differently each time, all completed with the same tool sequence. */
export function taskRuns(
  prefix: string,
  goals: string[],
  tools: string[],
  options: { status?: RunReport['status']; tenantId?: string; startAt?: number } = {},
): RunReport[] {
  return goals.map((goal, index) =>
    runReportSchema.parse({
      tenantId: options.tenantId ?? 'default',
      agentId: 'agent-1',
      runId: `${prefix}-${index + 1}`,
      goal,
      status: options.status ?? 'completed',
      startedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, (options.startAt ?? 0) + index)).toISOString(),
      completedAt: new Date(Date.UTC(2026, 0, 1, 0, 1, (options.startAt ?? 0) + index)).toISOString(),
      toolCalls: tools.map((tool, seq) => ({ tool, args: { step: seq }, success: true })),
    }),
  );
}

export async function ingest(database: TestDatabase, reports: RunReport[], tenantId = 'default'): Promise<void> {
  await upsertRuns(database.pool, tenantId, reports);
}

/** A good distiller answer for a task, in the four learned fields. */
export function learnedAnswer(name: string, whenToUse: string, tools: string[]): string {
  return [
    '---',
    `name: ${name}`,
    `when_to_use: ${whenToUse}`,
    `tools_required: [${tools.join(', ')}]`,
    '---',
    `# ${name}`,
    '',
    ...tools.map((tool, index) => `${index + 1}. Call \`${tool}\`.`),
    '',
    '## Edge cases',
    '- If a step fails, stop and report the error.',
  ].join('\n');
}
