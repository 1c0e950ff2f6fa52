import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/infra/temporal-dev-server.ts';
import { createChatClient, LlmResponseInvalid, LlmUnavailable } from '../../src/llm/chat-client.ts';
import { startScriptedLlm, type ScriptedLlm } from '../support/scripted-llm.ts';

describe('the OpenAI-compatible chat client, against a scripted server on loopback', () => {
  let llm: ScriptedLlm;

  beforeAll(async () => {
    llm = await startScriptedLlm(() => ({ content: 'hello' }));
  });
  afterAll(async () => {
    await llm.close();
  });

  const client = (timeoutMs = 5_000) => createChatClient({ baseUrl: llm.baseUrl, model: 'test-model', apiKey: 'sk-test', timeoutMs });

  it('sends the model, the temperature and both messages, and returns the content', async () => {
    llm.setScript(() => ({ content: 'SKIP' }));
    await expect(client().complete({ system: 'sys', user: 'usr', temperature: 0.1 })).resolves.toBe('SKIP');
    const request = llm.requests.at(-1)!;
    expect(request.model).toBe('test-model');
    expect(request.temperature).toBe(0.1);
    expect(request.messages).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'usr' },
    ]);
  });

  it('calls a refused connection LlmUnavailable', async () => {
    const closed = createChatClient({ baseUrl: `http://127.0.0.1:${await freePort()}/v1`, model: 'm', timeoutMs: 2_000 });
    await expect(closed.complete({ system: 's', user: 'u', temperature: 0 })).rejects.toThrow(LlmUnavailable);
    await expect(closed.complete({ system: 's', user: 'u', temperature: 0 })).rejects.toThrow(/unreachable/);
  });

  it('calls a 5xx and a slow answer LlmUnavailable', async () => {
    llm.setScript(() => ({ status: 503, body: '{"error":"overloaded"}' }));
    await expect(client().complete({ system: 's', user: 'u', temperature: 0 })).rejects.toThrow(/answered 503/);
    llm.setScript(() => ({ content: 'late', delayMs: 1_500 }));
    await expect(client(300).complete({ system: 's', user: 'u', temperature: 0 })).rejects.toThrow(LlmUnavailable);
  });

  it('calls a dropped connection LlmUnavailable', async () => {
    llm.setScript(() => ({ hangUp: true }));
    await expect(client().complete({ system: 's', user: 'u', temperature: 0 })).rejects.toThrow(LlmUnavailable);
  });

  it('calls a 4xx or a body of the wrong shape LlmResponseInvalid', async () => {
    llm.setScript(() => ({ status: 404, body: '{"error":"model not found"}' }));
    await expect(client().complete({ system: 's', user: 'u', temperature: 0 })).rejects.toThrow(LlmResponseInvalid);
    llm.setScript(() => ({ status: 200, body: '{"choices":[]}' }));
    await expect(client().complete({ system: 's', user: 'u', temperature: 0 })).rejects.toThrow(/no choices/);
    llm.setScript(() => ({ status: 200, body: 'not json' }));
    await expect(client().complete({ system: 's', user: 'u', temperature: 0 })).rejects.toThrow(/not JSON/);
  });
});
