import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunReportInput } from '../../src/runs/run-report.ts';

/** Writes a labelled corpus as the three files `skillsmith eval` reads (docs/evaluation.md): runs, labels, held-out. */
export interface LabelledCorpus {
  runs: Array<{ report: RunReportInput & { runId: string }; family: string | null }>;
  heldout: Array<{ goal: string; family: string | null; tools?: string[]; gold?: string[] }>;
}

const jsonl = (values: readonly unknown[]) => values.map((value) => JSON.stringify(value)).join('\n') + '\n';

export async function writeLabelledCorpus(
  directory: string,
  corpus: LabelledCorpus,
): Promise<{ runs: string; labels: string; heldout: string }> {
  await mkdir(directory, { recursive: true });
  const files = { runs: join(directory, 'runs.jsonl'), labels: join(directory, 'labels.jsonl'), heldout: join(directory, 'heldout.jsonl') };
  await writeFile(files.runs, jsonl(corpus.runs.map((run) => run.report)));
  await writeFile(files.labels, jsonl(corpus.runs.map((run) => ({ runId: run.report.runId, family: run.family }))));
  await writeFile(files.heldout, jsonl(corpus.heldout));
  return files;
}

/** `--name value` pairs of a corpus script's command line. */
export function corpusArguments(argv: readonly string[], defaults: Record<string, string>): Record<string, string> {
  const values = { ...defaults };
  for (let index = 0; index < argv.length; index += 2) {
    const name = argv[index];
    const value = argv[index + 1];
    if (!name?.startsWith('--') || value === undefined || !(name.slice(2) in defaults)) {
      throw new Error(
        `usage: ${Object.keys(defaults)
          .map((key) => `--${key} <${key}>`)
          .join(' ')} (got ${argv.join(' ')})`,
      );
    }
    values[name.slice(2)] = value;
  }
  return values;
}
