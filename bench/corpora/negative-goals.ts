import { readFile } from 'node:fs/promises';

/** The committed held-out negatives (negative-goals.txt): goals no family of either corpus serves, as held-out lines. */
export async function negativeHeldout(): Promise<Array<{ goal: string; family: null }>> {
  const text = await readFile(new URL('./negative-goals.txt', import.meta.url), 'utf8');
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((goal) => ({ goal, family: null }));
}
