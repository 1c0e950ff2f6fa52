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

export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  return sharedEncoder().encode(text).length;
}
