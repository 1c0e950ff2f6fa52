import { createChatClient, type ChatClient } from './chat-client.ts';
import { SkillsmithError } from '../errors/skillsmith-error.ts';

/** The LLM's slice of the configuration (SKILLSMITH_LLM_*). */
export interface LlmSettings {
  baseUrl: string | undefined;
  model: string;
  apiKey: string | undefined;
  timeoutMs: number;
}

/** An LLM is needed (to distil, to review) but SKILLSMITH_LLM_BASE_URL is not set. */
export class LlmNotConfigured extends SkillsmithError {
  static override readonly code = 'LlmNotConfigured';
  static override readonly retryable = false;
}

/** The chat client the configuration names; `purpose` says in the error what needed it. */
export function createConfiguredChatClient(config: { llm: LlmSettings }, purpose: string): ChatClient {
  if (!config.llm.baseUrl) {
    throw new LlmNotConfigured(`${purpose} needs an LLM but SKILLSMITH_LLM_BASE_URL is not set: point it at an OpenAI-compatible API`);
  }
  return createChatClient({
    baseUrl: config.llm.baseUrl,
    model: config.llm.model,
    apiKey: config.llm.apiKey,
    timeoutMs: config.llm.timeoutMs,
  });
}
