/**
 * Which embedding model: `skillsmith eval` of each candidate on each labelled corpus, one after the
 * other (an eval takes the machine), each in a fresh SKILLSMITH_HOME with the model's own profile
 * (SKILLSMITH_EMBEDDING_MODEL alone), then one table. The models must be pulled
 * (`skillsmith models pull --model ID`) into SKILLSMITH_MODEL_DIR; run `npm run build` first.
 *
 *   npx tsx bench/model-choice.ts --corpus /tmp/nestful --corpus /tmp/generated
 *        [--models ID,ID] [--out DIR] [--bin bin/skillsmith.js]
 *
 * --out keeps every report (`<model>--<corpus>.json`); --threshold-off runs with the recall
 * threshold off (SKILLSMITH_RECALL_THRESHOLD=-1), the reports bench/recall-calibration.ts reads.
 * --bin runs another build (a copy of dist/ that a rebuild in the work tree cannot change mid-run).
 * Every model is scored at convergence with SKILLSMITH_MAX_CLUSTERS_PER_PASS=--max-clusters-per-pass
 * (default 1000): the extractive distiller makes no LLM call the budget would cap, and at the
 * default of 10 a corpus of ~95 qualifying clusters takes 10 passes, ~11 min an eval here.
 */
import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import type { EvalReport } from '../src/eval/run-eval.ts';
import { packagedModels } from '../src/embedding/model-pull.ts';

const execFileAsync = promisify(execFile);

const { values } = parseArgs({
  options: {
    corpus: { type: 'string', multiple: true, default: [] },
    models: { type: 'string', default: [...packagedModels.keys()].join(',') },
    out: { type: 'string' },
    bin: { type: 'string', default: 'bin/skillsmith.js' },
    'threshold-off': { type: 'boolean', default: false },
    'max-clusters-per-pass': { type: 'string', default: '1000' },
    'timeout-minutes': { type: 'string', default: '30' },
  },
});
if (values.corpus.length === 0) throw new Error('usage: model-choice.ts --corpus DIR [--corpus DIR …] [--models ID,…] [--out DIR]');

async function evaluate(modelId: string, corpus: string): Promise<EvalReport> {
  const home = await mkdtemp(join(tmpdir(), 'skillsmith-model-choice-'));
  // mkdtemp makes it 0700: the stack's PostgreSQL server user must reach it, or the eval falls back to PGlite.
  await chmod(home, 0o755);
  try {
    const { stdout } = await execFileAsync(
      'nice',
      [
        process.execPath,
        resolve(values.bin),
        'eval',
        '--quiet',
        '--json',
        ...['--runs', join(corpus, 'runs.jsonl'), '--labels', join(corpus, 'labels.jsonl'), '--heldout', join(corpus, 'heldout.jsonl')],
      ],
      {
        env: {
          ...process.env,
          SKILLSMITH_HOME: home,
          SKILLSMITH_EMBEDDING_MODEL: modelId,
          SKILLSMITH_MAX_CLUSTERS_PER_PASS: values['max-clusters-per-pass'],
          ...(values['threshold-off'] ? { SKILLSMITH_RECALL_THRESHOLD: '-1' } : {}),
          SKILLSMITH_LOG_LEVEL: 'warn',
        },
        maxBuffer: 256 * 1024 * 1024,
        // An eval whose pass stops making progress would otherwise hold the table for good.
        timeout: Number(values['timeout-minutes']) * 60_000,
      },
    );
    return JSON.parse(stdout) as EvalReport;
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

const round = (value: number | undefined) => (value === undefined ? '–' : value.toFixed(2));
const rows: string[] = [
  '| model | corpus | family recall | purity | live skills mixing | held-out top-1 (covered) | false positives | converged | time |',
  '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
];
if (values.out) await mkdir(values.out, { recursive: true });
for (const modelId of values.models.split(',')) {
  for (const corpus of values.corpus) {
    const report = await evaluate(modelId, corpus).catch((error: Error & { stderr?: string }) => {
      // One failed eval is a row that says so (its last progress line), not the end of the table.
      const last = (error.stderr ?? error.message).trim().split('\n').at(-1);
      rows.push(`| ${modelId} | ${basename(corpus)} | failed: ${last} |`);
      process.stderr.write(`${rows.at(-1)}\n`);
      return undefined;
    });
    if (!report) continue;
    if (values.out) await writeFile(join(values.out, `${modelId.replace('/', '_')}--${basename(corpus)}.json`), JSON.stringify(report));
    const { familyRecall, clusters, skills, heldout } = report;
    const row =
      `| ${modelId} | ${basename(corpus)} | ${round(familyRecall.rate)} (${familyRecall.recalled}/${familyRecall.recurring}) ` +
      `| ${round(clusters.purity)} | ${skills.mixing}/${skills.live} ` +
      `| ${round(heldout?.top1Rate)} (${round(heldout?.top1CoveredRate)}) | ${heldout ? `${heldout.falsePositives}/${heldout.negatives}` : '–'} ` +
      `| ${report.converged ? 'yes' : 'no'} | ${(report.timings.totalMs / 1000).toFixed(0)} s |`;
    rows.push(row);
    process.stderr.write(`${row}\n`);
  }
}
process.stdout.write(`${rows.join('\n')}\n`);
