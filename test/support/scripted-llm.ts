import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local OpenAI-compatible chat server on loopback that a test scripts: the one stand-in the
 * project allows, at the LLM's HTTP boundary. Each request is answered by the script with the
 * parsed request; every request is kept for assertions.
 */

export interface ChatCompletionRequest {
  model: string;
  temperature?: number;
  messages: Array<{ role: string; content: string }>;
}

export type ScriptedAnswer = { content: string; delayMs?: number } | { status: number; body: string } | { hangUp: true };

export interface ScriptedLlm {
  baseUrl: string;
  requests: ChatCompletionRequest[];
  setScript(script: (request: ChatCompletionRequest) => ScriptedAnswer): void;
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startScriptedLlm(script: (request: ChatCompletionRequest) => ScriptedAnswer): Promise<ScriptedLlm> {
  let current = script;
  const requests: ChatCompletionRequest[] = [];
  const answerRequest = async (request: IncomingMessage, response: ServerResponse) => {
    if (request.method !== 'POST' || !request.url?.endsWith('/chat/completions')) {
      response.writeHead(404).end();
      return;
    }
    const parsed = JSON.parse(await readBody(request)) as ChatCompletionRequest;
    requests.push(parsed);
    const answer = current(parsed);
    if ('hangUp' in answer) {
      request.socket.destroy();
      return;
    }
    if ('status' in answer) {
      response.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
      return;
    }
    if (answer.delayMs) await new Promise((done) => setTimeout(done, answer.delayMs));
    response.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: `chatcmpl-${requests.length}`,
        object: 'chat.completion',
        model: parsed.model,
        choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: answer.content } }],
      }),
    );
  };
  const server: Server = createServer((request, response) => void answerRequest(request, response));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    setScript(next) {
      current = next;
    },
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
