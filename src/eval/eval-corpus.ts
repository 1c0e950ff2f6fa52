import { createReadStream } from 'node:fs';
import { requireReadableFile } from '../input/input-file.ts';
import { writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { MAX_TOOL_CALLS, parseRunReport } from '../runs/run-report.ts';
import { SkillsmithError } from '../errors/skillsmith-error.ts';
import { toolNameSchema } from '../input/tool-name.ts';
import type { FamilyLabel, LabelledRun } from './scoring.ts';

/**
 * The three files of a labelled corpus (`skillsmith eval`, docs/evaluation.md):
 * - runs: run reports, one per line (the ingest contract); their tenantId, if any, is replaced
 *   by the eval's fresh tenant;
 * - labels: `{"runId": "…", "family": "…" | null}` per line, one for every run;
 * - held-out (optional): `{"goal": "…", "family": "…" | null}` per line: goals no run has,
 *   null for goals that no family serves (anything recalled for them is a false positive);
 *   `tools` (the tool names a run for the goal called, in order) and `gold` (the goal's gold
 *   tool sequence) on every labelled goal for `eval --paired` (src/eval/paired-eval.ts).
 */

export const familyLabelSchema = z.string().min(1).max(512).nullable();
export const labelLineSchema = z.strictObject({ runId: z.string().min(1).max(128), family: familyLabelSchema });
const toolSequenceSchema = z.array(toolNameSchema).max(MAX_TOOL_CALLS);
export const heldoutLineSchema = z.strictObject({
  goal: z.string().min(1).max(2000),
  family: familyLabelSchema,
  tools: toolSequenceSchema.optional(),
  gold: toolSequenceSchema.optional(),
});
export type LabelLine = z.infer<typeof labelLineSchema>;
export type HeldoutLine = z.infer<typeof heldoutLineSchema>;

/** A CLI input error (no API route takes a corpus, and no activity throws it). */
export class EvalCorpusInvalid extends SkillsmithError {
  static override readonly code = 'EvalCorpusInvalid';
}

async function* jsonLines(file: string): AsyncGenerator<{ line: number; value: unknown; text: string }> {
  await requireReadableFile(file);
  let line = 0;
  for await (const text of createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity })) {
    line += 1;
    if (text.trim() === '') continue;
    try {
      yield { line, value: JSON.parse(text) as unknown, text };
    } catch (error) {
      throw new EvalCorpusInvalid(`${file} line ${line}: invalid JSON: ${(error as Error).message}`);
    }
  }
}

async function readSchemaLines<T>(file: string, schema: z.ZodType<T>): Promise<T[]> {
  const lines: T[] = [];
  for await (const { line, value } of jsonLines(file)) {
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new EvalCorpusInvalid(`${file} line ${line}: ${issue.path.join('.') || '(line)'}: ${issue.message}`);
    }
    lines.push(parsed.data);
  }
  return lines;
}

export const readLabels = (file: string): Promise<LabelLine[]> => readSchemaLines(file, labelLineSchema);
export const readHeldout = (file: string): Promise<HeldoutLine[]> => readSchemaLines(file, heldoutLineSchema);

export interface CorpusRuns {
  runs: Array<LabelledRun & { goal: string }>;
  /** The runs file with every report's tenantId set to the eval's tenant, ready for `ingestJsonlFile`. */
  tenantFile: string;
}

/**
 * Reads the runs file, joins each run with its label (every run needs one; a label without a
 * run is refused too), and writes a copy of the file for `tenantId`. Reports that fail the run
 * report contract are left for the ingest to refuse, with its line-by-line errors.
 */
export async function readCorpusRuns(
  runsFile: string,
  labels: readonly LabelLine[],
  tenantId: string,
  tenantFile: string,
): Promise<CorpusRuns> {
  const familyOf = new Map<string, FamilyLabel>();
  for (const label of labels) {
    if (familyOf.has(label.runId)) throw new EvalCorpusInvalid(`labels: run ${JSON.stringify(label.runId)} is labelled twice`);
    familyOf.set(label.runId, label.family);
  }
  const runs: CorpusRuns['runs'] = [];
  const rewritten: string[] = [];
  const unlabelled: string[] = [];
  for await (const { value, text } of jsonLines(runsFile)) {
    const record =
      value !== null && typeof value === 'object' && !Array.isArray(value) ? { ...(value as Record<string, unknown>), tenantId } : value;
    const parsed = parseRunReport(record);
    // An invalid report is copied as it came (it may be nested too deep to serialise): the ingest refuses it by its line.
    rewritten.push(parsed.success ? JSON.stringify(record) : text);
    if (!parsed.success) continue;
    const { runId, goal, status, toolCalls } = parsed.report;
    if (!familyOf.has(runId)) {
      unlabelled.push(runId);
      continue;
    }
    runs.push({
      runId,
      goal,
      status,
      successfulSteps: toolCalls.filter((call) => call.success).length,
      family: familyOf.get(runId) ?? null,
    });
  }
  if (unlabelled.length > 0) {
    throw new EvalCorpusInvalid(
      `${unlabelled.length} run(s) have no label, e.g. ${unlabelled
        .slice(0, 3)
        .map((id) => JSON.stringify(id))
        .join(', ')}`,
    );
  }
  const runIds = new Set(runs.map((run) => run.runId));
  const orphan = labels.find((label) => !runIds.has(label.runId));
  if (orphan && runs.length === rewritten.length) {
    throw new EvalCorpusInvalid(`labels: run ${JSON.stringify(orphan.runId)} is not in ${runsFile}`);
  }
  await writeFile(tenantFile, `${rewritten.join('\n')}\n`);
  return { runs, tenantFile };
}
