import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import type { Command } from 'commander';
import { createServices } from '../../app/services.ts';
import { startSynthesisPass, passResult } from '../../client/synthesis-client.ts';
import { clusteringDefaultsFor, type Config } from '../../config.ts';
import { createEmbedder } from '../../embedding/embedder.ts';
import { EmbeddingModelUnavailable } from '../../embedding/embedding-errors.ts';
import { pullModel, testEmbeddingModel } from '../../embedding/model-pull.ts';
import { listProcedures } from '../../procedures/procedure-repository.ts';
import type { RecalledSkill } from '../../recall/recall.ts';
import { ingestJsonlFile } from '../../runs/jsonl-ingest.ts';
import { findRun } from '../../runs/run-repository.ts';
import { generateRuns } from '../../runs/trace-generator.ts';
import { createPool } from '../../store/database.ts';
import type { CliContext } from '../context.ts';
import { startLocalStack } from '../local-stack.ts';
import { formatPass, watchPass, workflowUiLink } from './synthesis.ts';

/** The bundled sample runs: `generateRuns({ seed: SAMPLE_SEED, runs: 200 })`, committed as JSONL. */
export const SAMPLE_RUNS_FILE = fileURLToPath(new URL('../../demo/sample-runs.jsonl', import.meta.url));
const SAMPLE_SEED = 7;
const SAMPLE_RUNS = 200;
const RECALL_EXAMPLES = 3;

/**
 * What the demo changes in the configuration, each said out loud: a registry-shipped model when
 * the configured one cannot be loaded here (the demo's exception, never a production pass's),
 * and the extractive distiller when no LLM is configured.
 */
async function demoConfiguration(config: Config, log: (message: string) => void): Promise<{ config: Config; notes: string[] }> {
  const notes: string[] = [];
  let embedding = config.embedding;
  let synthesis = config.synthesis;
  try {
    await createEmbedder(embedding);
  } catch (error) {
    if (!(error instanceof EmbeddingModelUnavailable)) throw error;
    await pullModel({ modelDir: embedding.modelDir, onProgress: log });
    embedding = {
      ...embedding,
      model: testEmbeddingModel.modelId,
      pooling: testEmbeddingModel.pooling,
      prefixes: testEmbeddingModel.prefixes,
      dimension: undefined,
    };
    const clustering = clusteringDefaultsFor(testEmbeddingModel.modelId);
    synthesis = {
      ...synthesis,
      similarityTau: testEmbeddingModel.similarityTau,
      clusterSimilarity: clustering.similarity,
      clusterTau: clustering.clusterTau,
      clusterGoalWeight: clustering.goalWeight,
      clusterToolTau: clustering.toolTau,
    };
    notes.push(
      `note: the configured embedding model ${config.embedding.model} is not available here, so this demo uses the ` +
        `registry-shipped ${testEmbeddingModel.modelId} (${testEmbeddingModel.dimension}-d) at its measured τ = ${testEmbeddingModel.similarityTau} ` +
        'instead; production passes never substitute a model',
    );
  }
  if (synthesis.distiller === 'llm' && !config.llm.baseUrl) {
    synthesis = { ...synthesis, distiller: 'extractive' };
    notes.push('note: no LLM is configured (SKILLSMITH_LLM_BASE_URL), so this demo distils with the extractive distiller');
  }
  return { config: { ...config, embedding, synthesis }, notes };
}

/** A goal the sample does not contain: a fresh paraphrase from the task family of a learned skill. */
async function freshGoalFor(pool: Awaited<ReturnType<CliContext['openPool']>>, tenantId: string, runId: string): Promise<string | undefined> {
  const sample = generateRuns({ seed: SAMPLE_SEED, runs: SAMPLE_RUNS });
  const family = sample.find((run) => run.report.runId === runId)?.family;
  if (!family) return (await findRun(pool, tenantId, runId))?.goal;
  const known = new Set(sample.map((run) => run.report.goal));
  return generateRuns({ seed: 2027, runs: 40, families: [family], distractorRate: 0 })
    .map((run) => run.report.goal)
    .find((goal) => !known.has(goal));
}

export function registerDemoCommands(program: Command, context: CliContext): void {
  program
    .command('demo')
    .description('the main job on the embedded stack: ingest the bundled sample runs, run a synthesis pass, show the learned skills and recalls for new goals')
    .option('--keep-running', 'keep the stack and its Temporal Web UI up afterwards, until Ctrl-C', false)
    .action(async (options: { keepRunning: boolean }, command: Command) => {
      const { tenant, json } = command.optsWithGlobals<{ tenant: string; json: boolean }>();
      const say = (line: string) => process.stderr.write(`${line}\n`);
      const { config, notes } = await demoConfiguration(context.config, (message) => context.logger.info(message));
      if (!json) for (const note of notes) process.stdout.write(`${note}\n`);

      const stack = await startLocalStack(context, config);
      const pool = createPool(stack.databaseUrl);
      const connection = await Connection.connect({ address: stack.temporalAddress });
      try {
        if (!json) say(`stack up: Temporal ${stack.temporalAddress}, Postgres ${stack.embeddedDatabase ? '(embedded)' : stack.databaseUrl}`);
        const ingest = await ingestJsonlFile(pool, SAMPLE_RUNS_FILE, { tenantId: tenant });
        if (!json) say(`ingested the sample: ${ingest.inserted} new runs, ${ingest.unchanged} already there`);

        const client = new Client({ connection, namespace: config.temporal.namespace });
        const handle = await startSynthesisPass(client, { tenantId: tenant, full: true, taskQueue: config.temporal.taskQueue });
        const link = workflowUiLink(stack.temporalUiUrl, config.temporal.namespace, handle.workflowId);
        if (!json) say(`synthesis pass ${handle.workflowId}`);
        const pass = json ? await passResult(handle) : await watchPass(handle);

        const procedures = await listProcedures(pool, tenant);
        // Recall for new goals (paraphrases the sample does not contain) of the tasks just learned.
        const { recall } = createServices(config, pool, { logger: context.logger });
        const recalls: Array<{ goal: string; learnedFrom: string; matches: RecalledSkill[] }> = [];
        for (const learned of procedures.filter((procedure) => procedure.enabled && procedure.supersededBy === null).slice(0, RECALL_EXAMPLES)) {
          const goal = await freshGoalFor(pool, tenant, learned.provenance.from_sessions[0]!);
          if (goal) recalls.push({ goal, learnedFrom: learned.name, matches: await recall(tenant, { goal, topK: 2 }) });
        }

        context.output.result(
          json,
          {
            notes,
            pass,
            procedures: procedures.map(({ name, revision, whenToUse, toolsRequired, successCount, attemptCount, enabled, supersededBy }) => ({
              name,
              revision,
              whenToUse,
              toolsRequired,
              successCount,
              attemptCount,
              enabled,
              supersededBy,
            })),
            recall: recalls,
            uiUrl: link ?? null,
          },
          () =>
            [
              '',
              formatPass(pass),
              '',
              `learned skills (${procedures.length}):`,
              ...procedures.map(
                (procedure) => `  ${procedure.name}@${procedure.revision}  ${procedure.successCount}/${procedure.attemptCount} ok  ${procedure.toolsRequired.join(' → ')}`,
              ),
              '',
              recalls.length ? `recall for new goals of the tasks learned (τ = ${config.synthesis.similarityTau}):` : 'recall: nothing learned, nothing to recall',
              ...recalls.map(
                ({ goal, learnedFrom, matches }) =>
                  `  "${goal}" (a ${learnedFrom} task)\n    → ${
                    matches.length ? matches.map((match) => `${match.name}@${match.revision} (score ${match.score.toFixed(3)})`).join(', ') : 'no match'
                  }`,
              ),
              '',
              link
                ? `inspect the pass in the Temporal UI: ${link}` +
                  (options.keepRunning ? '' : '\n(the UI runs while the stack does: rerun with --keep-running, or start `skillsmith up` — the history is kept)')
                : '',
            ]
              .filter((line, index, lines) => line !== '' || lines[index - 1] !== '')
              .join('\n'),
        );
        if (pass.status === 'failed') process.exitCode = 1;
        if (options.keepRunning) {
          say('the stack stays up; Ctrl-C stops it');
          await new Promise<void>((done) => {
            process.once('SIGINT', done);
            process.once('SIGTERM', done);
          });
        }
      } finally {
        await connection.close();
        await pool.end();
        await stack.stop();
      }
    });
}
