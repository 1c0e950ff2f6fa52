import { z } from 'zod';
import {
  decodeToolArguments,
  deriveRunId,
  goalFromText,
  refuse,
  traceRunReport,
  type TraceConversion,
  type TraceConversionOptions,
  type TraceRefusal,
  type TraceToolCall,
} from './trace-run.ts';

/**
 * OpenTelemetry GenAI spans, exported as OTLP JSON (`resourceSpans → scopeSpans → spans`, what
 * the collector's file exporter and OTLP/HTTP JSON carry), as run reports: one run per traceId.
 * Per the GenAI semantic conventions:
 * - a tool call is a span with `gen_ai.operation.name = "execute_tool"` (named
 *   `execute_tool {gen_ai.tool.name}`), carrying `gen_ai.tool.name`, `gen_ai.tool.call.id`, and —
 *   when content capture is on — `gen_ai.tool.call.arguments` / `gen_ai.tool.call.result`; an
 *   error is the span status ERROR (its message, else `error.type`);
 * - the goal is the first user message of `gen_ai.input.messages` (`[{role, parts: [{type:
 *   "text", content}]}]`, on a chat or invoke_agent span or its
 *   `gen_ai.client.inference.operation.details` event), or of the older `gen_ai.user.message` event;
 * - the agent is `gen_ai.agent.name` (else `gen_ai.agent.id`, else the resource's `service.name`);
 * - the run failed when a root or `invoke_agent` span's status is ERROR.
 */

const anyValueSchema: z.ZodType<unknown> = z.lazy(() =>
  z.looseObject({
    stringValue: z.string().optional(),
    boolValue: z.boolean().optional(),
    intValue: z.union([z.string(), z.number()]).optional(),
    doubleValue: z.union([z.number(), z.string()]).optional(),
    bytesValue: z.string().optional(),
    arrayValue: z.looseObject({ values: z.array(anyValueSchema).optional() }).optional(),
    kvlistValue: z.looseObject({ values: z.array(keyValueSchema).optional() }).optional(),
  }),
);
const keyValueSchema: z.ZodType<{ key: string; value?: unknown }> = z.lazy(() =>
  z.looseObject({ key: z.string(), value: anyValueSchema.optional() }),
);
const attributesSchema = z.array(keyValueSchema).optional();
const nanosSchema = z.union([z.string().regex(/^\d+$/, 'must be nanoseconds since the epoch'), z.number().int().min(0)]);

const spanSchema = z.looseObject({
  traceId: z.string().min(1),
  spanId: z.string().optional(),
  parentSpanId: z.string().optional(),
  name: z.string().optional(),
  startTimeUnixNano: nanosSchema.optional(),
  endTimeUnixNano: nanosSchema.optional(),
  attributes: attributesSchema,
  events: z
    .array(z.looseObject({ name: z.string().optional(), timeUnixNano: nanosSchema.optional(), attributes: attributesSchema }))
    .optional(),
  status: z.looseObject({ code: z.union([z.number(), z.string()]).optional(), message: z.string().optional() }).optional(),
});

export const otlpTraceExportSchema = z.looseObject({
  resourceSpans: z.array(
    z.looseObject({
      resource: z.looseObject({ attributes: attributesSchema }).optional(),
      scopeSpans: z.array(z.looseObject({ spans: z.array(spanSchema).optional() })).optional(),
    }),
  ),
});

/** A span with its attributes decoded to plain values, its resource's attributes beside it. */
export interface OtelSpan {
  traceId: string;
  spanId?: string;
  parentSpanId?: string;
  name: string;
  startNanos?: bigint;
  endNanos?: bigint;
  attributes: Record<string, unknown>;
  resourceAttributes: Record<string, unknown>;
  events: Array<{ name: string; attributes: Record<string, unknown> }>;
  statusError: boolean;
  statusMessage?: string;
}

function decodeAnyValue(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return undefined;
  const any = value as Record<string, unknown>;
  if (any.stringValue !== undefined) return any.stringValue;
  if (any.boolValue !== undefined) return any.boolValue;
  if (any.intValue !== undefined) return Number(any.intValue);
  if (any.doubleValue !== undefined) return Number(any.doubleValue);
  if (any.bytesValue !== undefined) return any.bytesValue;
  if (any.arrayValue !== undefined) return ((any.arrayValue as { values?: unknown[] }).values ?? []).map((item) => decodeAnyValue(item));
  if (any.kvlistValue !== undefined)
    return decodeAttributes((any.kvlistValue as { values?: Array<{ key: string; value?: unknown }> }).values);
  return undefined;
}

function decodeAttributes(attributes: ReadonlyArray<{ key: string; value?: unknown }> | undefined): Record<string, unknown> {
  const decoded: Record<string, unknown> = {};
  for (const { key, value } of attributes ?? []) decoded[key] = decodeAnyValue(value);
  return decoded;
}

const nanos = (value: string | number | undefined): bigint | undefined => (value === undefined ? undefined : BigInt(value));
const isoFromNanos = (value: bigint): string => new Date(Number(value / 1_000_000n)).toISOString();
/** Status code 2 is ERROR; OTLP JSON carries enums as integers, some exporters as names. */
const isErrorStatus = (code: number | string | undefined): boolean => code === 2 || code === 'STATUS_CODE_ERROR' || code === 'ERROR';

export type OtelSpansResult = { success: true; spans: OtelSpan[] } | { success: false; refusal: TraceRefusal };

/** The spans of one OTLP JSON export (a line of the collector's file exporter, a request body). */
export function readOtlpSpans(value: unknown): OtelSpansResult {
  const parsed = otlpTraceExportSchema.safeParse(value);
  if (!parsed.success) {
    return { success: false, refusal: { record: '(record)', reason: `not an OTLP JSON trace export: ${z.prettifyError(parsed.error)}` } };
  }
  const spans: OtelSpan[] = [];
  for (const resourceSpans of parsed.data.resourceSpans) {
    const resourceAttributes = decodeAttributes(resourceSpans.resource?.attributes);
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        const startNanos = nanos(span.startTimeUnixNano);
        const endNanos = nanos(span.endTimeUnixNano);
        spans.push({
          traceId: span.traceId,
          ...(span.spanId ? { spanId: span.spanId } : {}),
          ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
          name: span.name ?? '',
          ...(startNanos === undefined ? {} : { startNanos }),
          ...(endNanos === undefined ? {} : { endNanos }),
          attributes: decodeAttributes(span.attributes),
          resourceAttributes,
          events: (span.events ?? []).map((event) => ({ name: event.name ?? '', attributes: decodeAttributes(event.attributes) })),
          statusError: isErrorStatus(span.status?.code),
          ...(span.status?.message ? { statusMessage: span.status.message } : {}),
        });
      }
    }
  }
  return { success: true, spans };
}

/** Spans grouped by traceId, in the order their traces first appear. */
export function groupSpansByTrace(spans: readonly OtelSpan[]): Map<string, OtelSpan[]> {
  const traces = new Map<string, OtelSpan[]>();
  for (const span of spans) {
    const group = traces.get(span.traceId) ?? [];
    group.push(span);
    traces.set(span.traceId, group);
  }
  return traces;
}

const byStart = (left: OtelSpan, right: OtelSpan): number =>
  left.startNanos === undefined || right.startNanos === undefined
    ? 0
    : left.startNanos < right.startNanos
      ? -1
      : left.startNanos > right.startNanos
        ? 1
        : 0;

const stringAttribute = (attributes: Record<string, unknown>, key: string): string | undefined =>
  typeof attributes[key] === 'string' && attributes[key] !== '' ? attributes[key] : undefined;

function isToolSpan(span: OtelSpan): boolean {
  return span.attributes['gen_ai.operation.name'] === 'execute_tool' || span.name.startsWith('execute_tool ');
}

/** The text of the first user message in a `gen_ai.input.messages` value (a JSON string, or already decoded). */
function userTextOfInputMessages(raw: unknown): string | undefined {
  let messages = raw;
  if (typeof raw === 'string') {
    try {
      messages = JSON.parse(raw) as unknown;
    } catch {
      return undefined;
    }
  }
  if (!Array.isArray(messages)) return undefined;
  for (const message of messages as unknown[]) {
    if (message === null || typeof message !== 'object' || (message as { role?: unknown }).role !== 'user') continue;
    const { parts, content } = message as { parts?: unknown; content?: unknown };
    if (typeof content === 'string' && content.trim()) return content;
    if (!Array.isArray(parts)) continue;
    const texts = parts.flatMap((part: unknown) => {
      const { type, content: text } = (part ?? {}) as { type?: unknown; content?: unknown };
      return type === 'text' && typeof text === 'string' ? [text] : [];
    });
    if (texts.join('').trim()) return texts.join('\n');
  }
  return undefined;
}

function goalOfTrace(spans: readonly OtelSpan[]): string | undefined {
  for (const span of spans) {
    const sources = [span.attributes, ...span.events.map((event) => event.attributes)];
    for (const attributes of sources) {
      const goal = goalFromText(userTextOfInputMessages(attributes['gen_ai.input.messages']));
      if (goal !== undefined) return goal;
    }
    for (const event of span.events) {
      if (event.name !== 'gen_ai.user.message') continue;
      const goal = goalFromText(typeof event.attributes.content === 'string' ? event.attributes.content : undefined);
      if (goal !== undefined) return goal;
    }
  }
  return undefined;
}

function toolCallOfSpan(span: OtelSpan): TraceToolCall {
  const tool = stringAttribute(span.attributes, 'gen_ai.tool.name') ?? span.name.replace(/^execute_tool /, '');
  const args = decodeToolArguments(span.attributes['gen_ai.tool.call.arguments']);
  const result = span.attributes['gen_ai.tool.call.result'];
  const exception = span.events.find((event) => event.name === 'exception');
  const error =
    span.statusMessage ??
    stringAttribute(exception?.attributes ?? {}, 'exception.message') ??
    stringAttribute(span.attributes, 'error.type') ??
    'the span status is ERROR';
  return {
    tool,
    ...(args ? { args } : {}),
    ...(result === undefined ? {} : { result }),
    success: !span.statusError,
    ...(span.statusError ? { error } : {}),
    ...(span.startNanos !== undefined && span.endNanos !== undefined && span.endNanos >= span.startNanos
      ? { durationMs: Number((span.endNanos - span.startNanos) / 1_000_000n) }
      : {}),
    ...(span.startNanos === undefined ? {} : { at: isoFromNanos(span.startNanos) }),
  };
}

/** The spans of one trace as one run, or why they make none. */
export function convertOtelTrace(traceId: string, traceSpans: readonly OtelSpan[], options: TraceConversionOptions = {}): TraceConversion {
  const record = `trace ${traceId}`;
  const spans = [...traceSpans].sort(byStart);
  const goal = goalOfTrace(spans);
  if (goal === undefined) {
    return refuse(record, 'no user message to take the goal from (gen_ai.input.messages, or a gen_ai.user.message event)');
  }
  const toolSpans = spans.filter((span) => isToolSpan(span));
  if (toolSpans.length === 0) return refuse(record, 'no tool calls: no execute_tool span (gen_ai.operation.name = "execute_tool")');

  const spanIds = new Set(spans.flatMap((span) => (span.spanId ? [span.spanId] : [])));
  const failed = spans.some(
    (span) =>
      span.statusError &&
      (span.parentSpanId === undefined || !spanIds.has(span.parentSpanId) || span.attributes['gen_ai.operation.name'] === 'invoke_agent'),
  );
  const starts = spans.flatMap((span) => (span.startNanos === undefined ? [] : [span.startNanos]));
  const ends = spans.flatMap((span) => (span.endNanos === undefined ? [] : [span.endNanos]));
  const first = starts.reduce<bigint | undefined>((low, value) => (low === undefined || value < low ? value : low), undefined);
  const last = [...ends, ...starts].reduce<bigint | undefined>(
    (high, value) => (high === undefined || value > high ? value : high),
    undefined,
  );
  const agentId = spans
    .map(
      (span) =>
        stringAttribute(span.attributes, 'gen_ai.agent.name') ??
        stringAttribute(span.attributes, 'gen_ai.agent.id') ??
        stringAttribute(span.resourceAttributes, 'service.name'),
    )
    .find((name) => name !== undefined && !name.startsWith('unknown_service'));
  const report = traceRunReport(
    'otel',
    {
      runId: deriveRunId('otel', traceId, traceId),
      goal,
      status: failed ? 'failed' : 'completed',
      ...(agentId === undefined ? {} : { agentId: agentId.slice(0, 128) }),
      ...(first === undefined ? {} : { startedAt: isoFromNanos(first) }),
      ...(last === undefined ? {} : { completedAt: isoFromNanos(last) }),
      toolCalls: toolSpans.map((span) => toolCallOfSpan(span)),
    },
    options,
  );
  return { success: true, runs: [{ record, report }] };
}

/** An OTLP JSON export as runs, one per trace; the first trace that makes no run refuses the whole export. */
export function convertOtlpExport(value: unknown, options: TraceConversionOptions = {}): TraceConversion {
  const read = readOtlpSpans(value);
  if (!read.success) return read;
  if (read.spans.length === 0) return refuse('(record)', 'no spans in the export');
  const runs = [];
  for (const [traceId, spans] of groupSpansByTrace(read.spans)) {
    const conversion = convertOtelTrace(traceId, spans, options);
    if (!conversion.success) return conversion;
    runs.push(...conversion.runs);
  }
  return { success: true, runs };
}
