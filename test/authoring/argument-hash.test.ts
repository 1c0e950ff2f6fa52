import { describe, expect, it } from 'vitest';
import { canonicalArgumentSha256, canonicalJson, skillManageIdempotencyKey } from '../../src/authoring/argument-hash.ts';

describe('canonical argument hash', () => {
  it('sorts object keys recursively and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, 1], c: 'x' } })).toBe('{"a":{"c":"x","d":[3,1]},"b":1}');
    expect(canonicalJson([{ b: 2, a: 1 }, null, 'é'])).toBe('[{"a":1,"b":2},null,"é"]');
  });

  it('hashes requests that differ only in key order the same, and any other difference differently', () => {
    const request = { operation: 'patch', name: 'n', expectedRevision: 3, skillMd: 'text' };
    const reordered = { skillMd: 'text', expectedRevision: 3, name: 'n', operation: 'patch' };
    expect(canonicalArgumentSha256(reordered)).toBe(canonicalArgumentSha256(request));
    expect(canonicalArgumentSha256({ ...request, expectedRevision: 4 })).not.toBe(canonicalArgumentSha256(request));
    expect(canonicalArgumentSha256({ ...request, skillMd: 'text ' })).not.toBe(canonicalArgumentSha256(request));
    expect(canonicalArgumentSha256(request)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('drops undefined members as JSON does', () => {
    expect(canonicalJson({ a: 1, b: undefined })).toBe('{"a":1}');
  });

  it('joins invocation identity and the argument hash into the idempotency key', () => {
    expect(skillManageIdempotencyKey('inv-1', 'ab'.repeat(32))).toBe(`inv-1:${'ab'.repeat(32)}`);
  });
});
