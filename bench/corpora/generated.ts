/**
 * Corpus 2: the seeded synthetic-runs generator (src/demo/synthetic-runs.ts)'s runs labelled with their procedure, and held-out goals
 * (fresh paraphrases of each family that no run has, plus the committed negatives). Each labelled
 * held-out goal carries the tools its own generated run called (`tools`) and its gold sequence
 * (`gold`: the family's steps in order, optional ones only where that run took them), which
 * `skillsmith eval --paired` compares.
 *
 *   npx tsx bench/corpora/generated.ts --out DIR [--seed 11] [--runs 1500] [--catalog varied|classic]
 *
 * The label is the procedure, not the goal's wording: in the varied catalog two families whose
 * goals differ but whose steps are the same (refund-order / damaged-delivery, expense-report /
 * mileage-claim) carry one label, and decoys whose goals read alike carry different ones.
 */
import { generateRuns, TASK_FAMILIES, VARIED_TASK_FAMILIES, type TaskFamily } from '../../src/demo/synthetic-runs.ts';
import { corpusArguments, writeLabelledCorpus } from './corpus-files.ts';
import { negativeHeldout } from './negative-goals.ts';

const HELDOUT_PER_FAMILY = 6;

/** The goal's gold tool sequence: its family's steps in order, the optional ones only where its run called them. */
const goldSequence = (family: TaskFamily, called: ReadonlySet<string>): string[] =>
  family.steps.filter((step) => (step.probability ?? 1) >= 1 || called.has(step.tool)).map((step) => step.tool);

const options = corpusArguments(process.argv.slice(2), { out: '', seed: '11', runs: '1500', catalog: 'varied' });
if (!options.out) throw new Error('--out DIR is required');
if (options.catalog !== 'varied' && options.catalog !== 'classic')
  throw new Error(`--catalog is varied or classic, not ${options.catalog}`);
const catalog = options.catalog;
const seed = Number(options.seed);
const runs = generateRuns({ seed, runs: Number(options.runs), catalog });
const known = new Set(runs.map((run) => run.report.goal));
const heldout: Array<{ goal: string; family: string | null; tools?: string[]; gold?: string[] }> = [];
for (const family of catalog === 'varied' ? VARIED_TASK_FAMILIES : TASK_FAMILIES) {
  const fresh = new Map<string, { goal: string; family: string; tools: string[]; gold: string[] }>();
  for (const run of generateRuns({ seed: seed + 1000, runs: 200, catalog, families: [family.id], distractorRate: 0 })) {
    if (!known.has(run.report.goal) && !fresh.has(run.report.goal) && run.procedure !== null) {
      const tools = run.report.toolCalls.map((call) => call.tool);
      const called = new Set(run.report.toolCalls.filter((call) => call.success).map((call) => call.tool));
      fresh.set(run.report.goal, { goal: run.report.goal, family: run.procedure, tools, gold: goldSequence(family, called) });
    }
    if (fresh.size === HELDOUT_PER_FAMILY) break;
  }
  heldout.push(...fresh.values());
}
heldout.push(...(await negativeHeldout()));
const files = await writeLabelledCorpus(options.out, {
  runs: runs.map(({ report, procedure }) => ({ report, family: procedure })),
  heldout,
});
const labels = new Set(runs.flatMap((run) => (run.procedure === null ? [] : [run.procedure])));
process.stdout.write(
  `${catalog} catalog, seed ${seed}: ${runs.length} runs, ${labels.size} procedures, ${runs.filter((run) => run.procedure === null).length} one-offs, ` +
    `${heldout.length} held-out goals → ${files.runs}, ${files.labels}, ${files.heldout}\n`,
);
