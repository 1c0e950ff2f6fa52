import { z } from 'zod';
import { SkillsmithError } from '../errors/skillsmith-error.ts';

/**
 * A minimal OpenAI-compatible chat client (`POST {baseUrl}/chat/completions`): the same wire
 * format Ollama, llama.cpp server, vLLM and OpenAI speak. One request, no retries here —
 * retries belong to the activity that calls it, where Temporal owns them.
 */

export interface ChatRequest {
  system: string;
  user: string;
  temperature: number;
  maxTokens?: number;
  /** Aborts the request (a cancelled pass). */
  signal?: AbortSignal;
}

export interface ChatClient {
  readonly model: string;
  complete(request: ChatRequest): Promise<string>;
}

/** The model server cannot be reached or is failing (refused, timed out, 5xx). */
export class LlmUnavailable extends SkillsmithError {
  static override readonly code = 'LlmUnavailable';
}

/** The server answered, but not with a usable completion (4xx, or a body of the wrong shape). */
export class LlmResponseInvalid extends SkillsmithError {
  static override readonly code = 'LlmResponseInvalid';
  static override readonly retryable = false;
}

const completionSchema = z.object({
  choices: z.array(z.object({ message: z.object({ content: z.string().nullable() }) })).min(1, 'the completion has no choices'),
});

export interface ChatClientOptions {
  baseUrl: string;
  model: string;
  apiKey?: string | undefined;
  timeoutMs: number;
  fetch?: typeof fetch;
}

export function createChatClient(options: ChatClientOptions): ChatClient {
  const endpoint = `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const doFetch = options.fetch ?? fetch;
  return {
    model: options.model,
    async complete(request) {
      let response: Response;
      try {
        response = await doFetch(endpoint, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
          },
          body: JSON.stringify({
            model: options.model,
            temperature: request.temperature,
            ...(request.maxTokens ? { max_tokens: request.maxTokens } : {}),
            messages: [
              { role: 'system', content: request.system },
              { role: 'user', content: request.user },
            ],
          }),
          signal: request.signal
            ? AbortSignal.any([request.signal, AbortSignal.timeout(options.timeoutMs)])
            : AbortSignal.timeout(options.timeoutMs),
        });
      } catch (error) {
        const cause = (error as Error & { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
        throw new LlmUnavailable(`LLM at ${endpoint} is unreachable (${cause}): ${(error as Error).message}`);
      }
      const text = await response.text().catch(() => '');
      if (response.status >= 500 || response.status === 429) {
        throw new LlmUnavailable(`LLM at ${endpoint} answered ${response.status}: ${text.slice(0, 200)}`);
      }
      if (!response.ok) {
        throw new LlmResponseInvalid(`LLM at ${endpoint} refused the request with ${response.status}: ${text.slice(0, 200)}`);
      }
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw new LlmResponseInvalid(`LLM at ${endpoint} answered with a body that is not JSON: ${text.slice(0, 200)}`);
      }
      const parsed = completionSchema.safeParse(body);
      if (!parsed.success) {
        throw new LlmResponseInvalid(`LLM at ${endpoint} answered with an unexpected shape: ${parsed.error.issues[0]?.message}`);
      }
      return parsed.data.choices[0]!.message.content ?? '';
    },
  };
}
