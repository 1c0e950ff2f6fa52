import { z } from 'zod';

/**
 * What Postgres can store verbatim, checked at every boundary (HTTP routes, CLI inputs, the
 * run report, SKILL.md text) so a hostile value is a 4xx naming its field, never a 500 from
 * the database or a RangeError from serialising it. Every other character — control
 * characters, escape sequences, prompt-injection text — is data and is kept exactly.
 */

// eslint-disable-next-line no-control-regex -- finding the control character NUL is this pattern's job
const NUL_CHARACTER = /\u0000/;
const UNPAIRED_SURROGATE = /\p{Cs}/u;

/** Reason a string cannot be stored verbatim in a Postgres text or jsonb value, or null. */
export function unstorableTextReason(value: string): string | null {
  if (NUL_CHARACTER.test(value)) return 'contains a NUL character (U+0000), which Postgres text cannot store';
  if (UNPAIRED_SURROGATE.test(value)) return 'contains an unpaired UTF-16 surrogate (not valid Unicode)';
  return null;
}

/** A string that Postgres can store byte-for-byte: the one string type of every boundary. */
export function storableString() {
  return z.string().superRefine((value, context) => {
    const reason = unstorableTextReason(value);
    if (reason !== null) context.addIssue({ code: 'custom', message: reason });
  });
}

/**
 * The path (below `value`) of a node nested deeper than `maxDepth` (`value` itself is depth 0), or null. Iterative,
 * so a document nested 100,000 deep is measured without overflowing the stack — and must be,
 * before anything recursive (JSON.stringify, Postgres jsonb) touches it.
 */
export function jsonDepthExcess(value: unknown, maxDepth: number): PropertyKey[] | null {
  const stack: Array<{ node: unknown; path: PropertyKey[] }> = [{ node: value, path: [] }];
  while (stack.length > 0) {
    const { node, path } = stack.pop()!;
    if (path.length > maxDepth) return path;
    if (node === null || typeof node !== 'object') continue;
    const entries: Array<[PropertyKey, unknown]> = Array.isArray(node) ? node.map((item, index) => [index, item]) : Object.entries(node);
    for (const [key, item] of entries) stack.push({ node: item, path: [...path, key] });
  }
  return null;
}

/** Where, inside a JSON document, a value cannot be stored, and why. */
export interface UnstorableJson {
  path: PropertyKey[];
  reason: string;
}

/** The first node nested deeper than `maxDepth`, or string or key Postgres cannot store, inside a JSON document. */
export function unstorableJson(value: unknown, maxDepth: number): UnstorableJson | null {
  if (jsonDepthExcess(value, maxDepth) !== null) return { path: [], reason: `nested deeper than ${maxDepth} levels` };
  return unstorableNode(value, []);
}

/** Recursive, so only for values whose depth is already bounded. */
function unstorableNode(value: unknown, path: PropertyKey[]): UnstorableJson | null {
  if (typeof value === 'string') {
    const reason = unstorableTextReason(value);
    return reason === null ? null : { path, reason };
  }
  if (value === null || typeof value !== 'object') return null;
  const entries: Array<[PropertyKey, unknown]> = Array.isArray(value) ? value.map((item, index) => [index, item]) : Object.entries(value);
  for (const [key, item] of entries) {
    const keyReason = typeof key === 'string' ? unstorableTextReason(key) : null;
    if (keyReason !== null) return { path: [...path, key], reason: `the key ${keyReason}` };
    const found = unstorableNode(item, [...path, key]);
    if (found !== null) return found;
  }
  return null;
}

/**
 * A JSON object whose depth is at most `maxDepth` and whose strings and keys are storable; its
 * size as JSON is measured only after both (so JSON.stringify never meets a hostile depth).
 */
export function storableJsonObject(maxDepth: number, maxBytes: number) {
  return z.record(z.string(), z.unknown()).superRefine((value, context) => {
    const unstorable = unstorableJson(value, maxDepth);
    if (unstorable !== null) {
      context.addIssue({ code: 'custom', path: unstorable.path, message: unstorable.reason });
      return;
    }
    const bytes = Buffer.byteLength(JSON.stringify(value), 'utf8');
    if (bytes > maxBytes) context.addIssue({ code: 'custom', message: `is ${bytes} bytes as JSON; the limit is ${maxBytes}` });
  });
}
