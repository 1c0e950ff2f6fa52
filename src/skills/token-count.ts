import { createHash } from 'node:crypto';
import { getEncoding, type Tiktoken } from 'js-tiktoken';

/**
 * The one token counter every skill rule uses: js-tiktoken with the `cl100k_base` encoding.
 * The encoder is built on first use (loading its ranks costs ~100 ms) and shared afterwards.
 */
export const TOKEN_ENCODING = 'cl100k_base';

let encoder: Tiktoken | undefined;

function sharedEncoder(): Tiktoken {
  encoder ??= getEncoding(TOKEN_ENCODING);
  return encoder;
}

/**
 * Long texts come back again and again (a package member loaded by session after session, a
 * body validated then installed): their counts are kept by digest, the most recent few hundred.
 * Hashing 10 KB takes microseconds, tokenizing it milliseconds; short texts are simply counted.
 */
const REMEMBERED_FROM_LENGTH = 4096;
const REMEMBERED_COUNTS = 256;
const remembered = new Map<string, number>();

/**
 * A text is counted as it would reach a model as text: a special token's spelling in it
 * (`<|endoftext|>` in a skill about tokenizers) is ordinary characters, neither refused (the
 * encoder's default throws a bare Error, so such a body failed to install) nor one token.
 */
const encodeAsText = (text: string) => sharedEncoder().encode(text, [], []).length;

export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  if (text.length < REMEMBERED_FROM_LENGTH) return encodeAsText(text);
  const digest = createHash('sha256').update(text).digest('base64');
  let count = remembered.get(digest);
  if (count === undefined) count = encodeAsText(text);
  // Most recently used last: the first key is the one to forget.
  remembered.delete(digest);
  remembered.set(digest, count);
  if (remembered.size > REMEMBERED_COUNTS) remembered.delete(remembered.keys().next().value!);
  return count;
}
