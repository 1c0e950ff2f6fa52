import type { Config } from '../config.ts';
import { createChatClient } from '../llm/chat-client.ts';
import { createExtractiveDistiller, createLlmDistiller, type Distiller } from './distiller.ts';

/** SKILLSMITH_DISTILLER=llm without SKILLSMITH_LLM_BASE_URL: the pass cannot distil and says so. */
export class LlmNotConfigured extends Error {
  override readonly name = 'LlmNotConfigured';
}

/**
 * The distiller the configuration names. There is no fallback: an `llm` distiller whose model is
 * missing or down never turns into the extractive one.
 */
export function createConfiguredDistiller(config: Pick<Config, 'synthesis' | 'llm' | 'skillLicense'>): Distiller {
  const license = config.skillLicense;
  if (config.synthesis.distiller === 'extractive') return createExtractiveDistiller({ license });
  if (!config.llm.baseUrl) {
    throw new LlmNotConfigured(
      'SKILLSMITH_DISTILLER=llm but SKILLSMITH_LLM_BASE_URL is not set: point it at an OpenAI-compatible API, ' +
        'or choose SKILLSMITH_DISTILLER=extractive',
    );
  }
  return createLlmDistiller(
    createChatClient({ baseUrl: config.llm.baseUrl, model: config.llm.model, apiKey: config.llm.apiKey, timeoutMs: config.llm.timeoutMs }),
    { license },
  );
}
