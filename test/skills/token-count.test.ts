import { readFile } from 'node:fs/promises';
import fc from 'fast-check';
import { getEncoding } from 'js-tiktoken';
import { describe, expect, it } from 'vitest';
import { countTokens, TOKEN_ENCODING } from '../../src/skills/token-count.ts';

describe('countTokens', () => {
  const encoder = getEncoding(TOKEN_ENCODING);
  const exact = (text: string) => encoder.encode(text).length;
  const long = (seed: number) => Array.from({ length: 400 }, (_, line) => `Step ${seed}-${line}: inspect carefully.`).join('\n');

  it('counts a long text exactly, again when it comes back, and never gives one text the count of another', () => {
    const text = long(1);
    expect(text.length).toBeGreaterThan(4096);
    expect(countTokens(text)).toBe(exact(text));
    expect(countTokens(text)).toBe(exact(text));
    // Same length, one word more: its own count, not the remembered one.
    const changed = `${text.slice(0, -4)} a b`;
    expect(exact(changed)).not.toBe(exact(text));
    expect(countTokens(changed)).toBe(exact(changed));
    // Past the remembered few hundred, the first is counted afresh, still exactly.
    for (let seed = 2; seed < 300; seed++) countTokens(long(seed));
    expect(countTokens(text)).toBe(exact(text));
    expect(countTokens('short text')).toBe(exact('short text'));
    expect(countTokens('')).toBe(0);
  });

  it('counts the spelling of a special token as ordinary text, short or long, rather than refusing it', () => {
    const short = 'Explain that <|endoftext|> ends a document and <|fim_prefix|> starts an infill.';
    // What the encoder's default does with it: refuse the whole text.
    expect(() => encoder.encode(short)).toThrow(/special token/);
    expect(countTokens(short)).toBe(encoder.encode(short, [], []).length);
    // Ordinary characters, not the one special token.
    expect(countTokens('<|endoftext|>')).toBeGreaterThan(1);
    const longText = `${long(7)}\n<|endoftext|>\n`;
    expect(countTokens(longText)).toBe(encoder.encode(longText, [], []).length);
  });
  it("counts every text exactly as js-tiktoken's own cl100k_base encoder does (the rank table read lazily)", async () => {
    // Generated text of every kind the encoder splits differently: any Unicode (astral planes,
    // lone surrogates' replacements), words, digits, whitespace runs, code-like punctuation.
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 400 }),
          fc.string({ unit: fc.constantFrom(...'ab é日本😀 \n\t0123456789.,;:{}()[]<>|/\\\'"`-_=+*&^%$#@!~'), maxLength: 400 }),
        ),
        (text) => countTokens(text) === encoder.encode(text, [], []).length,
      ),
      { numRuns: 1000, seed: 20261202 },
    );
    // Long real texts: the repository's own documents.
    for (const path of ['README.md', 'bench/README.md', 'src/skills/token-count.ts']) {
      const text = await readFile(path, 'utf8');
      expect(countTokens(text)).toBe(encoder.encode(text, [], []).length);
    }
  });
});
