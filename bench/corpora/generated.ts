/**
 * Corpus 2: the seeded trace generator's runs with their family labels, and held-out goals
 * (fresh paraphrases of each family that no run has, plus the committed negatives).
 *
 *   npx tsx bench/corpora/generated.ts --out DIR [--seed 11] [--runs 1500]
 */
import { generateRuns, TASK_FAMILIES } from '../../src/runs/trace-generator.ts';
import { corpusArguments, writeLabelledCorpus } from './corpus-files.ts';
import { negativeHeldout } from './negative-goals.ts';

const HELDOUT_PER_FAMILY = 6;

const options = corpusArguments(process.argv.slice(2), { out: '', seed: '11', runs: '1500' });
if (!options.out) throw new Error('--out DIR is required');
const seed = Number(options.seed);
const runs = generateRuns({ seed, runs: Number(options.runs) });
const known = new Set(runs.map((run) => run.report.goal));
const heldout: Array<{ goal: string; family: string | null }> = [];
for (const family of TASK_FAMILIES) {
  const fresh = new Set<string>();
  for (const run of generateRuns({ seed: seed + 1000, runs: 200, families: [family.id], distractorRate: 0 })) {
    if (!known.has(run.report.goal)) fresh.add(run.report.goal);
    if (fresh.size === HELDOUT_PER_FAMILY) break;
  }
  heldout.push(...[...fresh].map((goal) => ({ goal, family: family.id })));
}
heldout.push(...(await negativeHeldout()));
const files = await writeLabelledCorpus(options.out, { runs: runs.map(({ report, family }) => ({ report, family })), heldout });
process.stdout.write(`${runs.length} runs, ${heldout.length} held-out goals → ${files.runs}, ${files.labels}, ${files.heldout}\n`);
