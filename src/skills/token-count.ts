import { createHash } from 'node:crypto';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100kBase from 'js-tiktoken/ranks/cl100k_base';

/**
 * The one token counter every skill rule uses: js-tiktoken with the `cl100k_base` encoding
 * (`getEncoding(TOKEN_ENCODING)` counts the same). The encoder is built on first use and shared.
 */
export const TOKEN_ENCODING = 'cl100k_base';

let encoder: Tiktoken | undefined;

function sharedEncoder(): Tiktoken {
  encoder ??= quickEncoder() ?? new Tiktoken(cl100kBase);
  return encoder;
}

/** 'hello world' in cl100k_base: what the quick encoder must give, or it is not used. */
const KNOWN_TOKENS = { text: 'hello world', tokens: [15339, 1917] };
/** Byte sequences looked up so far (hits and misses): past this many the memo starts again. */
const LOOKUP_MEMO_LIMIT = 200_000;

/**
 * js-tiktoken's own constructor decodes all 100k ranks into a map keyed by their bytes before the
 * first count: 0.6–0.7 s of CPU in every process that counts a token (a `skills install`, a
 * worker distilling, each CLI test's child). This encoder keeps the ranks by their base64 text,
 * as the rank file spells them (60–70 ms to read), and converts a byte sequence the encoder asks
 * for when it asks, remembering the answer (counts as fast as the original's once warm). It uses
 * the encoder's internal rank table (`rankMap`, looked up with `get` on the bytes joined by commas),
 * so it is checked on a known text and, should a js-tiktoken release change that, left unused.
 */
function quickEncoder(): Tiktoken | undefined {
  const ranks = new Map<string, number>();
  for (const line of cl100kBase.bpe_ranks.split('\n')) {
    // `<prefix> <first rank> <token> <token> …`, each token its bytes in base64.
    const fields = line.split(' ');
    let rank = Number.parseInt(fields[1] ?? '', 10);
    for (let index = 2; index < fields.length; index++) ranks.set(fields[index]!, rank++);
  }
  const memo = new Map<string, number | null>();
  const rankMap = {
    get(joinedBytes: string): number | undefined {
      let rank = memo.get(joinedBytes);
      if (rank === undefined) {
        rank = ranks.get(Buffer.from(joinedBytes.split(',').map(Number)).toString('base64')) ?? null;
        if (memo.size >= LOOKUP_MEMO_LIMIT) memo.clear();
        memo.set(joinedBytes, rank);
      }
      return rank ?? undefined;
    },
  };
  // Built with no ranks (instant), then given the lookup above in place of the decoded table.
  const quick = new Tiktoken({ ...cl100kBase, bpe_ranks: '' });
  const internals = quick as unknown as { rankMap?: unknown };
  if (!(internals.rankMap instanceof Map)) return undefined;
  internals.rankMap = rankMap;
  try {
    const tokens = quick.encode(KNOWN_TOKENS.text, [], []);
    return tokens.join() === KNOWN_TOKENS.tokens.join() ? quick : undefined;
  } catch {
    return undefined;
  }
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
