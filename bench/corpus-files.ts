import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';

/** A labelled corpus's files (bench/corpora/*.ts write them), read by the benches that score against labels. */

const labelSchema = z.object({ runId: z.string(), family: z.string().nullable() });

/** Every non-empty line of a JSONL file, parsed with the schema (a bench's input: a bad line throws). */
export const jsonLines = async <T>(file: string, schema: z.ZodType<T>): Promise<T[]> =>
  (await readFile(file, 'utf8'))
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => schema.parse(JSON.parse(line)));

/** The corpus's `labels.jsonl`: each run's family (null for a one-off), by run id. */
export async function readFamilies(corpus: string): Promise<Map<string, string | null>> {
  return new Map((await jsonLines(join(corpus, 'labels.jsonl'), labelSchema)).map((label) => [label.runId, label.family]));
}
