import { z } from 'zod';
import type { RunStatus } from '../runs/run-report.ts';
import {
  answerToolCall,
  deriveRunId,
  goalFromText,
  isoFromUnixSeconds,
  refuse,
  traceRunReport,
  type TraceConversion,
  type TraceConversionOptions,
  type TraceToolCall,
  unansweredToolCall,
} from './trace-run.ts';

/**
 * OpenAI transcripts as run reports. Two shapes, both as the OpenAI API reference defines them:
 * - Chat Completions: `{messages: [...], id?, created?, choices?}` — a request's messages, where
 *   assistant messages carry `tool_calls: [{id, function: {name, arguments}}]` and results come
 *   back as `{role: "tool", tool_call_id, content}`; the final response's `choices` may be
 *   included (its message ends the transcript, its `finish_reason` gives the status). A bare
 *   array of messages is a transcript too.
 * - Responses API: `{input, output?, id?, created_at?, status?}` — items `function_call
 *   {call_id, name, arguments}` and `function_call_output {call_id, output}`, with messages as
 *   `{type: "message", role, content}` (or the short `{role, content}`); a bare array of items too.
 * Objects are loose: a transcript carries many fields (tools, temperature, usage) we do not need.
 */

const contentPartSchema = z.looseObject({ type: z.string().optional(), text: z.string().optional() });
const messageContentSchema = z.union([z.string(), z.array(contentPartSchema), z.null()]).optional();

const chatToolCallSchema = z.looseObject({
  id: z.string(),
  type: z.string().optional(),
  function: z.looseObject({ name: z.string(), arguments: z.string().optional() }),
});

export const chatMessageSchema = z.looseObject({
  role: z.string(),
  content: messageContentSchema,
  name: z.string().optional(),
  tool_calls: z.array(chatToolCallSchema).nullable().optional(),
  tool_call_id: z.string().optional(),
  /** The deprecated single function call (answered by a `role: "function"` message with its name). */
  function_call: z.looseObject({ name: z.string(), arguments: z.string().optional() }).nullable().optional(),
  refusal: z.string().nullable().optional(),
});
type ChatMessage = z.infer<typeof chatMessageSchema>;

export const chatTranscriptSchema = z.looseObject({
  id: z.string().optional(),
  created: z.number().optional(),
  messages: z.array(chatMessageSchema),
  choices: z.array(z.looseObject({ message: chatMessageSchema, finish_reason: z.string().nullable().optional() })).optional(),
});

export const responseItemSchema = z.looseObject({
  type: z.string().optional(),
  id: z.string().optional(),
  role: z.string().optional(),
  content: messageContentSchema,
  call_id: z.string().optional(),
  name: z.string().optional(),
  arguments: z.string().optional(),
  output: z.unknown().optional(),
  status: z.string().optional(),
});
type ResponseItem = z.infer<typeof responseItemSchema>;

export const responsesTranscriptSchema = z.looseObject({
  id: z.string().optional(),
  created_at: z.number().optional(),
  completed_at: z.number().nullable().optional(),
  status: z.string().optional(),
  error: z.looseObject({ message: z.string().optional(), code: z.string().optional() }).nullable().optional(),
  input: z.union([z.string(), z.array(responseItemSchema)]).optional(),
  output: z.array(responseItemSchema).optional(),
});

/** A Responses transcript (rather than Chat Completions): `input`/`output` items, or an array of `type`d items. */
export function isResponsesTranscript(value: unknown): boolean {
  if (Array.isArray(value)) return value.some((item) => item !== null && typeof item === 'object' && 'type' in item && !('role' in item));
  if (value === null || typeof value !== 'object') return false;
  return 'input' in value || 'output' in value || (value as { object?: unknown }).object === 'response';
}

function messageText(content: ChatMessage['content']): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const texts = content.flatMap((part) => (typeof part.text === 'string' ? [part.text] : []));
  return texts.length > 0 ? texts.join('\n') : undefined;
}

/** The goal: the first user message that has text (a user turn can carry only images or files). */
function firstGoal(contents: ReadonlyArray<ChatMessage['content']>): string | undefined {
  for (const content of contents) {
    const goal = goalFromText(messageText(content));
    if (goal !== undefined) return goal;
  }
  return undefined;
}

function recordName(kind: string, id: string | undefined): string {
  return id === undefined ? '(record)' : `${kind} ${id}`;
}

/** These APIs carry no error flag on a result: a call with a result succeeded, one without failed. */
const NO_TOOL_RESULT = 'no tool result in the transcript';

function convertChat(value: unknown, options: TraceConversionOptions): TraceConversion {
  const parsed = chatTranscriptSchema.safeParse(Array.isArray(value) ? { messages: value } : value);
  if (!parsed.success) return refuse('(record)', `not an OpenAI Chat Completions transcript: ${z.prettifyError(parsed.error)}`);
  const transcript = parsed.data;
  const record = recordName('completion', transcript.id);
  const finalChoice = transcript.choices?.[0];
  const messages = finalChoice === undefined ? transcript.messages : [...transcript.messages, finalChoice.message];

  const goal = firstGoal(messages.filter((message) => message.role === 'user').map((message) => message.content));
  if (goal === undefined) return refuse(record, 'no user message with text to take the goal from');

  const calls: TraceToolCall[] = [];
  const pendingById = new Map<string, TraceToolCall>();
  const pendingByFunctionName = new Map<string, TraceToolCall>();
  for (const message of messages) {
    if (message.role === 'assistant') {
      for (const toolCall of message.tool_calls ?? []) {
        const call = unansweredToolCall(toolCall.function.name, toolCall.function.arguments, NO_TOOL_RESULT);
        calls.push(call);
        pendingById.set(toolCall.id, call);
      }
      if (message.function_call) {
        const call = unansweredToolCall(message.function_call.name, message.function_call.arguments, NO_TOOL_RESULT);
        calls.push(call);
        pendingByFunctionName.set(message.function_call.name, call);
      }
    } else if (message.role === 'tool' && message.tool_call_id !== undefined) {
      answerToolCall(pendingById.get(message.tool_call_id), messageText(message.content));
      pendingById.delete(message.tool_call_id);
    } else if (message.role === 'function' && message.name !== undefined) {
      answerToolCall(pendingByFunctionName.get(message.name), messageText(message.content));
      pendingByFunctionName.delete(message.name);
    }
  }
  if (calls.length === 0) return refuse(record, 'no tool calls: no assistant message has tool_calls');

  const last = messages.at(-1);
  const endsWithAnswer = last?.role === 'assistant' && !last.tool_calls?.length && !last.function_call && !last.refusal;
  let status: RunStatus = endsWithAnswer ? 'completed' : 'failed';
  if (finalChoice?.finish_reason === 'length' || finalChoice?.finish_reason === 'content_filter') status = 'failed';
  const time = isoFromUnixSeconds(transcript.created);
  const report = traceRunReport(
    'openai',
    { runId: deriveRunId('openai', transcript.id, value), goal, status, startedAt: time, completedAt: time, toolCalls: calls },
    options,
  );
  return { success: true, runs: [{ record, report }] };
}

function itemKind(item: ResponseItem): string {
  return item.type ?? (item.role !== undefined ? 'message' : '(untyped)');
}

const RESPONSE_STATUSES: Record<string, RunStatus> = {
  completed: 'completed',
  failed: 'failed',
  incomplete: 'failed',
  cancelled: 'cancelled',
};

function convertResponses(value: unknown, options: TraceConversionOptions): TraceConversion {
  const parsed = responsesTranscriptSchema.safeParse(Array.isArray(value) ? { input: value } : value);
  if (!parsed.success) return refuse('(record)', `not an OpenAI Responses transcript: ${z.prettifyError(parsed.error)}`);
  const transcript = parsed.data;
  const record = recordName('response', transcript.id);
  const input: ResponseItem[] =
    typeof transcript.input === 'string' ? [{ type: 'message', role: 'user', content: transcript.input }] : (transcript.input ?? []);
  const items = [...input, ...(transcript.output ?? [])];

  const goal = firstGoal(items.filter((item) => itemKind(item) === 'message' && item.role === 'user').map((item) => item.content));
  if (goal === undefined) return refuse(record, 'no user message with text to take the goal from');

  const calls: TraceToolCall[] = [];
  const pending = new Map<string, TraceToolCall>();
  for (const item of items) {
    if (item.type === 'function_call' && item.name !== undefined) {
      const call = unansweredToolCall(
        item.name,
        item.arguments,
        item.status === 'incomplete' ? 'the function call is incomplete' : NO_TOOL_RESULT,
      );
      calls.push(call);
      if (item.call_id !== undefined) pending.set(item.call_id, call);
    } else if (item.type === 'function_call_output' && item.call_id !== undefined) {
      const call = pending.get(item.call_id);
      pending.delete(item.call_id);
      const output =
        typeof item.output === 'string' || item.output === undefined ? item.output : messageText(item.output as ChatMessage['content']);
      answerToolCall(call, output ?? (item.output === undefined ? undefined : JSON.stringify(item.output)));
    }
  }
  if (calls.length === 0) return refuse(record, 'no tool calls: no function_call item');

  const last = items.at(-1);
  const endsWithAnswer = last !== undefined && itemKind(last) === 'message' && last.role === 'assistant';
  let status: RunStatus = endsWithAnswer ? 'completed' : 'failed';
  if (transcript.status !== undefined && RESPONSE_STATUSES[transcript.status] !== undefined) status = RESPONSE_STATUSES[transcript.status]!;
  if (transcript.error) status = 'failed';
  const startedAt = isoFromUnixSeconds(transcript.created_at);
  const completedAt = isoFromUnixSeconds(transcript.completed_at ?? undefined) ?? startedAt;
  const report = traceRunReport(
    'openai',
    { runId: deriveRunId('openai', transcript.id, value), goal, status, startedAt, completedAt, toolCalls: calls },
    options,
  );
  return { success: true, runs: [{ record, report }] };
}

/** One OpenAI transcript (Chat Completions or Responses) as one run, or why it makes none. */
export function convertOpenAiTranscript(value: unknown, options: TraceConversionOptions = {}): TraceConversion {
  return isResponsesTranscript(value) ? convertResponses(value, options) : convertChat(value, options);
}
