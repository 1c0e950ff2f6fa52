import { configForModel, type Config } from './config.ts';
import { createEmbedder } from '../embedding/embedder.ts';
import { embeddingModelsInUse } from '../embedding/goal-embedding-repository.ts';
import { createConfiguredDistiller } from '../synthesis/distiller-choice.ts';
import type { Queryable } from '../store/database.ts';

/** What `up` checks beside the round trip: what recall and passes need, each with why not. */
export interface ServingCheck {
  name: 'embedder' | 'distiller';
  ok: boolean;
  detail: string;
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Every embedding model the stack will be asked for loads: each tenant's (src/embedding/
 * tenant-config.ts) and the configured one, which a new tenant takes even when every tenant so far
 * uses another. A model that fails names the command that gets it.
 */
export async function checkEmbedders(db: Queryable, config: Config): Promise<ServingCheck[]> {
  const inUse = await embeddingModelsInUse(db);
  const models = [...new Set([config.embedding.model, ...inUse])];
  const checks: ServingCheck[] = [];
  for (const modelId of models) {
    try {
      const embedder = await createEmbedder(configForModel(config, modelId).embedding);
      const [vector] = await embedder.embed(['stack check'], 'query');
      const users = inUse.includes(modelId) ? 'a tenant is embedded with it' : 'new tenants take it';
      checks.push({ name: 'embedder', ok: true, detail: `${modelId} loads and embeds (${vector!.length}-d; ${users})` });
    } catch (error) {
      checks.push({ name: 'embedder', ok: false, detail: message(error) });
    }
  }
  return checks;
}

/**
 * The configured distiller can distil: the extractive one always; the LLM one when
 * SKILLSMITH_LLM_BASE_URL is set and its OpenAI-compatible API answers `GET /models`.
 */
export async function checkDistiller(config: Config, timeoutMs = 5_000): Promise<ServingCheck> {
  try {
    createConfiguredDistiller(config);
  } catch (error) {
    return { name: 'distiller', ok: false, detail: message(error) };
  }
  const baseUrl = config.llm.baseUrl;
  if (config.synthesis.distiller === 'extractive' || !baseUrl) {
    return { name: 'distiller', ok: true, detail: 'extractive (no model needed)' };
  }
  const url = `${baseUrl.replace(/\/+$/, '')}/models`;
  try {
    const response = await fetch(url, {
      headers: config.llm.apiKey ? { authorization: `Bearer ${config.llm.apiKey}` } : {},
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.body?.cancel();
    return response.ok
      ? { name: 'distiller', ok: true, detail: `llm ${config.llm.model} at ${baseUrl} (GET /models answered ${response.status})` }
      : {
          name: 'distiller',
          ok: false,
          detail: `llm at ${baseUrl}: GET ${url} answered ${response.status} (SKILLSMITH_LLM_BASE_URL, SKILLSMITH_LLM_API_KEY)`,
        };
  } catch (error) {
    const cause = (error as Error & { cause?: Error }).cause?.message;
    return {
      name: 'distiller',
      ok: false,
      detail: `llm at ${baseUrl}: GET ${url} failed: ${message(error)}${cause ? ` (${cause})` : ''} (SKILLSMITH_LLM_BASE_URL)`,
    };
  }
}
