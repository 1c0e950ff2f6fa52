import type { FastifyInstance } from 'fastify';
import { SkillsmithError } from '../errors/skillsmith-error.ts';

/** A JSON body whose bytes are not UTF-8: refused rather than stored with U+FFFD in their place. */
export class InvalidUtf8 extends SkillsmithError {
  static override readonly code = 'InvalidUtf8';
  static override readonly httpStatus = 400;
  constructor(readonly field: string) {
    super(`the body is not valid UTF-8: ${field} holds bytes that are not UTF-8 (send JSON encoded as UTF-8)`);
  }
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
const lenientUtf8 = new TextDecoder('utf-8');

/** The first field (`toolCalls[0].args.note`, or a key's path) whose text holds U+FFFD, as the lenient decoding left it. */
function fieldWithReplacement(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return value.includes('\uFFFD') ? path : undefined;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = fieldWithReplacement(item, `${path}[${index}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const keyPath = path ? `${path}.${key}` : key;
      if (key.includes('\uFFFD')) return `the key ${JSON.stringify(key)} at ${path || 'the top level'}`;
      const found = fieldWithReplacement(item, keyPath);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * Fastify's own JSON parser (its prototype-poisoning checks, its errors) behind a strict UTF-8
 * check: a body with bytes that are not UTF-8 is refused with 400 `InvalidUtf8` naming the field,
 * where the default decoding silently replaced them with U+FFFD.
 */
export function parseJsonAsStrictUtf8(
  app: Pick<FastifyInstance, 'getDefaultJsonParser' | 'removeContentTypeParser' | 'addContentTypeParser'>,
): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    let text: string;
    try {
      text = strictUtf8.decode(bytes);
    } catch {
      // Not UTF-8: parsed leniently only to say where.
      void parseJson(request, lenientUtf8.decode(bytes), (error, parsed) => {
        done(error ?? new InvalidUtf8(fieldWithReplacement(parsed, '') ?? 'the body'), undefined);
      });
      return;
    }
    void parseJson(request, text, done);
  });
}
