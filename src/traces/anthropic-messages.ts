import { z } from 'zod';
import type { RunStatus } from '../runs/run-report.ts';
import {
  answerToolCall,
  deriveRunId,
  goalFromText,
  refuse,
  traceRunReport,
  type TraceConversion,
  type TraceConversionOptions,
  type TraceToolCall,
  unansweredToolCall,
} from './trace-run.ts';

/**
 * Anthropic Messages transcripts as run reports: `{messages: [...], system?, id?, stop_reason?}`
 * (a request's messages with the final response appended), or a bare array of messages. Per the
 * Messages API reference, an assistant turn's content holds `tool_use {id, name, input}` blocks
 * (also `mcp_tool_use {id, name, server_name, input}`), and the next user turn answers each with
 * `tool_result {tool_use_id, content, is_error?}`. The Messages API carries no timestamps, so a
 * converted run's times are the fixed UNKNOWN_TIME (see trace-run.ts).
 */

const blockSchema = z.looseObject({
  type: z.string(),
  text: z.string().optional(),
  id: z.string().optional(),
  name: z.string().optional(),
  server_name: z.string().optional(),
  input: z.unknown().optional(),
  tool_use_id: z.string().optional(),
  content: z.unknown().optional(),
  is_error: z.boolean().optional(),
});
type Block = z.infer<typeof blockSchema>;

export const anthropicMessageSchema = z.looseObject({
  role: z.string(),
  content: z.union([z.string(), z.array(blockSchema)]),
});
type AnthropicMessage = z.infer<typeof anthropicMessageSchema>;

export const anthropicTranscriptSchema = z.looseObject({
  id: z.string().optional(),
  stop_reason: z.string().nullable().optional(),
  messages: z.array(anthropicMessageSchema),
});

const TOOL_USE_BLOCKS = new Set(['tool_use', 'server_tool_use', 'mcp_tool_use']);
const TOOL_RESULT_BLOCKS = new Set(['tool_result', 'mcp_tool_result']);
/** Stop reasons that mean the run did not finish its work. */
const UNFINISHED_STOP_REASONS = new Set(['max_tokens', 'refusal', 'tool_use', 'pause_turn', 'model_context_window_exceeded']);

function blocksOf(message: AnthropicMessage): Block[] {
  return typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
}

function textOf(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const texts = content.flatMap((block: unknown) =>
    block !== null && typeof block === 'object' && typeof (block as { text?: unknown }).text === 'string'
      ? [(block as { text: string }).text]
      : [],
  );
  return texts.length > 0 ? texts.join('\n') : undefined;
}

/** Whether a value looks like Anthropic content: a `tool_use`/`tool_result` block, or a top-level `system`/`stop_reason`. */
export function hasAnthropicMarkers(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (!Array.isArray(value) && ('system' in value || 'stop_reason' in value || (value as { type?: unknown }).type === 'message'))
    return true;
  const messages = Array.isArray(value) ? value : (value as { messages?: unknown }).messages;
  if (!Array.isArray(messages)) return false;
  return messages.some(
    (message: unknown) =>
      message !== null &&
      typeof message === 'object' &&
      Array.isArray((message as { content?: unknown }).content) &&
      (message as { content: unknown[] }).content.some((block) => {
        const type = block !== null && typeof block === 'object' ? (block as { type?: unknown }).type : undefined;
        return typeof type === 'string' && (TOOL_USE_BLOCKS.has(type) || TOOL_RESULT_BLOCKS.has(type));
      }),
  );
}

/** One Anthropic Messages transcript as one run, or why it makes none. */
export function convertAnthropicMessages(value: unknown, options: TraceConversionOptions = {}): TraceConversion {
  const parsed = anthropicTranscriptSchema.safeParse(Array.isArray(value) ? { messages: value } : value);
  if (!parsed.success) return refuse('(record)', `not an Anthropic Messages transcript: ${z.prettifyError(parsed.error)}`);
  const transcript = parsed.data;
  const record = transcript.id === undefined ? '(record)' : `message ${transcript.id}`;

  let goal: string | undefined;
  for (const message of transcript.messages) {
    if (message.role !== 'user') continue;
    goal = goalFromText(textOf(blocksOf(message).filter((block) => block.type === 'text')));
    if (goal !== undefined) break;
  }
  if (goal === undefined) return refuse(record, 'no user message with text to take the goal from');

  const calls: TraceToolCall[] = [];
  const pending = new Map<string, TraceToolCall>();
  for (const message of transcript.messages) {
    for (const block of blocksOf(message)) {
      if (TOOL_USE_BLOCKS.has(block.type) && block.name !== undefined) {
        const tool = block.type === 'mcp_tool_use' && block.server_name ? `${block.server_name}/${block.name}` : block.name;
        const call = unansweredToolCall(tool, block.input, 'no tool_result in the transcript');
        calls.push(call);
        if (block.id !== undefined) pending.set(block.id, call);
      } else if (TOOL_RESULT_BLOCKS.has(block.type) && block.tool_use_id !== undefined) {
        const call = pending.get(block.tool_use_id);
        pending.delete(block.tool_use_id);
        if (call === undefined) continue;
        const result = textOf(block.content) ?? (block.content === undefined ? undefined : JSON.stringify(block.content));
        if (block.is_error === true) {
          call.error = result ?? 'the tool reported an error';
        } else {
          answerToolCall(call, result);
        }
      }
    }
  }
  if (calls.length === 0) return refuse(record, 'no tool calls: no assistant message has a tool_use block');

  const last = transcript.messages.at(-1);
  const endsWithAnswer = last?.role === 'assistant' && !blocksOf(last).some((block) => TOOL_USE_BLOCKS.has(block.type));
  let status: RunStatus = endsWithAnswer ? 'completed' : 'failed';
  if (transcript.stop_reason && UNFINISHED_STOP_REASONS.has(transcript.stop_reason)) status = 'failed';
  const report = traceRunReport(
    'anthropic',
    { runId: deriveRunId('anthropic', transcript.id, value), goal, status, toolCalls: calls },
    options,
  );
  return { success: true, runs: [{ record, report }] };
}
