import { randomBytes } from 'node:crypto';
import { Option, type Command } from 'commander';
import type { Config } from '../../app/config.ts';
import { temporalConnectionOptions } from '../../app/temporal-environment.ts';
import type { EvalOptions } from '../../eval/run-eval.ts';
import { currentCombination } from '../../rollout/activation.ts';
import { readStackFile } from '../stack-file.ts';
import type { CliContext } from '../context.ts';
import { watchPass } from './synthesis.ts';

const DEFAULT_MAX_PASSES = 10;

/** A tenant no earlier eval used: `eval-<utc time>-<random>`, so every eval starts from nothing. */
function freshEvalTenant(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15).toLowerCase();
  return `eval-${stamp}-${randomBytes(3).toString('hex')}`;
}

/** Where the eval runs: the stack named by the environment or `skillsmith up`, else one it starts on free ports. */
async function openStack(context: CliContext, config: Config) {
  const running = (config.temporal.address && config.databaseUrl) || (await readStackFile(config.home));
  if (running) {
    return { databaseUrl: await context.databaseUrl(), temporalAddress: await context.temporalAddress(), stop: async () => undefined };
  }
  const { startLocalStack } = await import('../local-stack.ts');
  return startLocalStack(context, evalStackConfig(config));
}

/**
 * The configuration of the stack an eval starts for itself: free ports for everything it binds,
 * so an eval never collides with another stack on this machine (a running `up` holds the
 * configured ones), and no metrics endpoint for its worker: nothing scrapes an eval.
 */
export function evalStackConfig(config: Config): Config {
  return {
    ...config,
    temporal: { ...config.temporal, port: 0, uiPort: 0 },
    postgresPort: 0,
    metrics: { ...config.metrics, workerPort: undefined },
  };
}

export function registerEvalCommands(program: Command, context: CliContext): void {
  program
    .command('eval')
    .description(
      'the learning scoreboard: ingest a labelled corpus into a fresh tenant, run full synthesis passes until one changes nothing, ' +
        'and score clusters, skills and recall against the labels (docs/evaluation.md)',
    )
    .requiredOption('--runs <file>', 'run reports, one JSON per line')
    .requiredOption('--labels <file>', '{"runId", "family"} per line, one for every run')
    .option('--heldout <file>', '{"goal", "family"} per line: goals no run has; family null for goals nothing should match')
    .option(
      '--paired <pairs-file>',
      'offline paired estimate: each labelled held-out goal (with its "tools" and "gold" sequences) without and with recall, ' +
        'written as a `rollout record` pairs file for the current combination',
    )
    .addOption(
      new Option('--max-passes <n>', 'stop after this many passes').default(DEFAULT_MAX_PASSES).argParser((value) => {
        const parsed = Number(value);
        if (!Number.isInteger(parsed) || parsed < 1) throw new Error(`invalid --max-passes ${JSON.stringify(value)}: a positive integer`);
        return parsed;
      }),
    )
    .action(async (options: { runs: string; labels: string; heldout?: string; paired?: string; maxPasses: number }, command: Command) => {
      const { json } = command.optsWithGlobals<{ json: boolean }>();
      const { config } = context;
      const started = Date.now();
      const say = (line: string) => process.stderr.write(`[${((Date.now() - started) / 1000).toFixed(1)} s] ${line}\n`);
      const { requireReadableFile } = await import('../../input/input-file.ts');
      // Files that cannot be read are said before any stack is started.
      for (const file of [options.runs, options.labels, ...(options.heldout ? [options.heldout] : [])]) await requireReadableFile(file);
      const tenantId = freshEvalTenant();
      const evalOptions: EvalOptions = {
        tenantId,
        runsFile: options.runs,
        labelsFile: options.labels,
        ...(options.heldout === undefined ? {} : { heldoutFile: options.heldout }),
        ...(options.paired === undefined ? {} : { paired: { pairsFile: options.paired, combination: currentCombination(config) } }),
        maxPasses: options.maxPasses,
        settings: {
          embeddingModel: config.embedding.model,
          similarityTau: config.synthesis.similarityTau,
          recallThreshold: config.recall.threshold,
          recallAcceptanceSlack: config.recall.acceptanceSlack,
          linkage: config.synthesis.linkage,
          distiller: config.synthesis.distiller,
          minOccurrences: config.synthesis.minOccurrences,
          minSuccessRate: config.synthesis.minSuccessRate,
          minSteps: config.synthesis.minSteps,
          maxClustersPerPass: config.synthesis.maxClustersPerPass,
        },
      };
      // A corpus the files alone refuse is said before a stack starts or the model loads (seconds of each).
      const { readEvalCorpus, runEval } = await import('../../eval/run-eval.ts');
      const corpus = await readEvalCorpus(evalOptions);
      try {
        // The stack, Temporal's client and the services load here, not for `--help`.
        const [{ Client, Connection }, { createServices }, { startSynthesisPass }, { formatEvalReport }, { createPool }] =
          await Promise.all([
            import('@temporalio/client'),
            import('../../app/services.ts'),
            import('../../client/synthesis-client.ts'),
            import('../../eval/eval-table.ts'),
            import('../../store/database.ts'),
          ]);
        const stack = await openStack(context, config);
        const pool = createPool(stack.databaseUrl);
        const connection = await Connection.connect(temporalConnectionOptions(config.temporal, stack.temporalAddress));
        try {
          say(`eval tenant ${tenantId}: Temporal ${stack.temporalAddress}`);
          const client = new Client({ connection, namespace: config.temporal.namespace });
          const services = createServices(config, pool, { logger: context.logger, temporalAddress: stack.temporalAddress });
          // Load the model before the first pass, so a missing model fails the eval at once.
          await services.embedder(tenantId);
          const report = await runEval(
            {
              pool,
              runPass: async (tenant) =>
                watchPass(
                  await startSynthesisPass(client, {
                    tenantId: tenant,
                    full: true,
                    taskQueue: config.temporal.taskQueue,
                    heartbeatTimeoutSeconds: config.synthesis.heartbeatTimeoutSeconds,
                  }),
                ),
              recall: async (tenant, goal) =>
                (await services.recall(tenant, { goal, topK: 2 })).map(({ name, score }) => ({ name, score })),
              progress: say,
            },
            evalOptions,
            corpus,
          );
          // The recalls' last_used_at hints are written before the pool closes (else a warning at every eval's end).
          await services.recallUsage.flush();
          context.output.result(json, report, () => formatEvalReport(report));
        } finally {
          await connection.close();
          await pool.end();
          await stack.stop();
        }
      } finally {
        await corpus.discard();
      }
    });
}
