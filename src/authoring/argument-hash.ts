import { createHash } from 'node:crypto';

/**
 * The canonical argument hash of skill_manage's idempotency key: JSON with object keys
 * sorted (recursively), no insignificant whitespace, then sha256. Two requests that differ
 * only in key order hash the same; any other difference hashes differently.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const encoded = JSON.stringify(value);
    if (encoded === undefined) throw new TypeError(`not representable in JSON: ${String(value)}`);
    return encoded;
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, entry]) => entry !== undefined)
    .sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));
  return `{${entries.map(([key, entry]) => `${JSON.stringify(key)}:${canonicalJson(entry)}`).join(',')}}`;
}

export function canonicalArgumentSha256(argumentsValue: unknown): string {
  return createHash('sha256').update(canonicalJson(argumentsValue), 'utf8').digest('hex');
}

/** The idempotency key recorded on an agent revision: invocation identity + argument hash. */
export function skillManageIdempotencyKey(invocationId: string, argumentSha256: string): string {
  return `${invocationId}:${argumentSha256}`;
}
