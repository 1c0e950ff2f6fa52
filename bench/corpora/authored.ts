/**
 * Corpus 3: paraphrase-heavy runs (src/demo/authored-runs.ts): many small families whose goals
 * different "authors" wrote with different words, neighbouring tasks that share a prefix,
 * common-tool tasks with different purposes, families too small to recur. Held out: two fresh
 * wordings per family (families without a skill should get nothing back) plus the committed negatives.
 *
 *   npx tsx bench/corpora/authored.ts --out DIR [--seed 7]
 */
import { generateAuthoredCorpus } from '../../src/demo/authored-runs.ts';
import { corpusArguments, writeLabelledCorpus } from './corpus-files.ts';
import { negativeHeldout } from './negative-goals.ts';

const options = corpusArguments(process.argv.slice(2), { out: '', seed: '7' });
if (!options.out) throw new Error('--out DIR is required');
const corpus = generateAuthoredCorpus({ seed: Number(options.seed) });
const heldout = [...corpus.heldout, ...(await negativeHeldout())];
const files = await writeLabelledCorpus(options.out, { runs: corpus.runs.map(({ report, family }) => ({ report, family })), heldout });
const families = new Set(corpus.runs.flatMap((run) => (run.family === null ? [] : [run.family])));
process.stdout.write(
  `authored corpus, seed ${options.seed}: ${corpus.runs.length} runs, ${families.size} families, ` +
    `${corpus.runs.filter((run) => run.family === null).length} one-offs, ${heldout.length} held-out goals → ${files.runs}, ${files.labels}, ${files.heldout}\n`,
);
