import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { listProcedures } from '../procedures/procedure-repository.ts';
import { formatIngestError, ingestJsonlFile } from '../runs/jsonl-ingest.ts';
import type { PassRecord } from '../contracts/pass-record.ts';
import { listPassClusters } from '../synthesis/pass-repository.ts';
import type { Combination } from '../rollout/paired-evidence.ts';
import { EvalCorpusInvalid, readCorpusRuns, readHeldout, readLabels, type CorpusRuns, type HeldoutLine } from './eval-corpus.ts';
import { comparePaired, type PairedEvalReport, type PairedGoalInput } from './paired-eval.ts';
import {
  clusterPurity,
  rate,
  recurringFamilies,
  scoreInSample,
  scoreRecall,
  scoreSkills,
  type ClusterPurity,
  type FamilyLabel,
  type LiveSkill,
  type RecallCase,
  type RecallScoreDistributions,
  type SkillComposition,
} from './scoring.ts';

/**
 * `skillsmith eval`: ingest a labelled corpus into a fresh tenant, run full synthesis passes
 * (the real workflow) until one changes nothing, and score what was learned against the
 * labels. The Temporal side (starting a pass) and recall come in as functions, so this module
 * knows neither the client nor the embedder.
 */

export interface EvalDependencies {
  pool: pg.Pool;
  /** Starts a full synthesis pass for the tenant and resolves with its record when it ends. */
  runPass(tenantId: string): Promise<PassRecord>;
  /** recall_skill(goal, topK 2) for the tenant: the returned skills, best first. */
  recall(tenantId: string, goal: string): Promise<Array<{ name: string; score: number }>>;
  /** Progress lines (stderr in the CLI). */
  progress(message: string): void;
}

export interface EvalOptions {
  tenantId: string;
  runsFile: string;
  labelsFile: string;
  heldoutFile?: string;
  /** Stop after this many passes even if the last one still changed something. */
  maxPasses: number;
  /** The settings the pass runs with, echoed into the report (the worker's configuration). */
  settings: Record<string, string | number>;
  /** `--paired`: compare each labelled held-out goal without and with recall, and write the pairs file here. */
  paired?: { pairsFile: string; combination: Combination };
}

export interface EvalReport {
  tenantId: string;
  settings: Record<string, string | number>;
  corpus: {
    runs: number;
    labelledFamilies: number;
    unlabelledRuns: number;
    recurringFamilies: number;
    heldoutPositives: number;
    heldoutNegatives: number;
  };
  passes: Array<{ id: string; status: string; outcome: string | null; counts: PassRecord['counts'] }>;
  /** False when the last pass still changed something (maxPasses reached) or a pass did not complete. */
  converged: boolean;
  clusters: ClusterPurity & { qualifying: ClusterPurity };
  skills: {
    total: number;
    live: number;
    mixing: number;
    familiesWithSeveralSkills: number;
    /** Every live skill: its plurality family and that family's share of its provenance runs. */
    list: SkillComposition[];
  };
  familyRecall: { recurring: number; recalled: number; rate: number; missed: string[] };
  heldout: null | {
    positives: number;
    /** Positives whose family has an owning live skill; the covered rates are over these. */
    covered: number;
    top1: number;
    top2: number;
    answered: number;
    /** Positives answered with a skill that does not own their family. */
    wrongSkill: number;
    /** Of those, goals whose family has no skill (recall should have abstained). */
    wrongSkillUncovered: number;
    wrongSkillRate: number;
    top1Rate: number;
    top2Rate: number;
    top1CoveredRate: number;
    top2CoveredRate: number;
    negatives: number;
    falsePositives: number;
    falsePositiveRate: number;
  };
  inSample: { goals: number; top1: number; rate: number };
  /** `--paired` only: the offline paired comparison (src/eval/paired-eval.ts). */
  paired: PairedEvalReport | null;
  /** The best recall score of every goal asked (none counts as 0), for calibrating the recall threshold (docs/evaluation.md). */
  recallScores: RecallScoreDistributions;
  timings: { ingestMs: number; passesMs: number; scoringMs: number; totalMs: number };
}

async function ingestCorpus(deps: EvalDependencies, options: EvalOptions, corpus: EvalCorpus) {
  const ingest = await ingestJsonlFile(deps.pool, corpus.tenantFile, { tenantId: options.tenantId });
  if (ingest.invalid > 0) {
    const shown = ingest.errors.slice(0, 5).map(formatIngestError).join('; ');
    throw new EvalCorpusInvalid(`${options.runsFile}: ${ingest.invalid} invalid line(s): ${shown}${ingest.errors.length > 5 ? '; …' : ''}`);
  }
  deps.progress(`ingested ${ingest.inserted} runs into tenant ${options.tenantId}`);
}

/** `--paired` needs the original run's tools and the gold sequence of every labelled held-out goal. */
type PairedLine = HeldoutLine & { family: string; tools: string[]; gold: string[] };
function pairedGoals(heldout: readonly HeldoutLine[]): PairedLine[] {
  const goals: PairedLine[] = [];
  for (const line of heldout) {
    if (line.family === null) continue;
    if (line.tools === undefined || line.gold === undefined) {
      throw new EvalCorpusInvalid(`--paired: held-out goal ${JSON.stringify(line.goal)} has no "tools" and "gold" tool sequences`);
    }
    goals.push({ ...line, family: line.family, tools: line.tools, gold: line.gold });
  }
  return goals;
}

/** Full passes until one adds, updates and supersedes nothing (or maxPasses). */
async function runPasses(deps: EvalDependencies, options: EvalOptions): Promise<{ passes: PassRecord[]; converged: boolean }> {
  const passes: PassRecord[] = [];
  for (let number = 1; number <= options.maxPasses; number += 1) {
    deps.progress(`synthesis pass ${number}…`);
    const pass = await deps.runPass(options.tenantId);
    passes.push(pass);
    const { added, updated, superseded, qualifying } = pass.counts;
    deps.progress(`pass ${number}: ${pass.status}, qualifying ${qualifying}, added ${added}, updated ${updated}, superseded ${superseded}`);
    if (pass.status !== 'completed') return { passes, converged: false };
    if (added + updated + superseded === 0) return { passes, converged: true };
  }
  return { passes, converged: false };
}

/**
 * The corpus read and checked: every refusal the files alone decide (a run without a label, a
 * label twice, --paired without its sequences) comes from here, before a stack is started or a
 * model loaded. The runs file is rewritten for the eval's tenant into a temporary directory.
 */
export interface EvalCorpus {
  runs: CorpusRuns['runs'];
  heldout: HeldoutLine[];
  toCompare: PairedLine[];
  tenantFile: string;
  /** Removes the rewritten runs file. */
  discard(): Promise<void>;
}

export async function readEvalCorpus(options: EvalOptions): Promise<EvalCorpus> {
  // The held-out file is checked before the runs are read: --paired needs its sequences.
  if (options.paired && !options.heldoutFile) throw new EvalCorpusInvalid('--paired needs --heldout: the goals it compares');
  const heldout = options.heldoutFile ? await readHeldout(options.heldoutFile) : [];
  const toCompare = options.paired ? pairedGoals(heldout) : [];
  const labels = await readLabels(options.labelsFile);
  const work = await mkdtemp(join(tmpdir(), 'skillsmith-eval-'));
  const discard = () => rm(work, { recursive: true, force: true });
  try {
    const { runs, tenantFile } = await readCorpusRuns(options.runsFile, labels, options.tenantId, join(work, 'runs.jsonl'));
    return { runs, heldout, toCompare, tenantFile, discard };
  } catch (error) {
    await discard();
    throw error;
  }
}

/** Runs the eval over `corpus` (readEvalCorpus; read here when not given), and discards it. */
export async function runEval(deps: EvalDependencies, options: EvalOptions, corpus?: EvalCorpus): Promise<EvalReport> {
  const started = Date.now();
  const read = corpus ?? (await readEvalCorpus(options));
  const { runs, heldout, toCompare } = read;
  try {
    await ingestCorpus(deps, options, read);
  } finally {
    await read.discard();
  }
  const ingested = Date.now();

  const { passes, converged } = await runPasses(deps, options);
  const passesDone = Date.now();

  const familyOf = new Map<string, FamilyLabel>(runs.map((run) => [run.runId, run.family]));
  const goalOf = new Map(runs.map((run) => [run.runId, run.goal]));
  const labelOf = (runId: string) => familyOf.get(runId) ?? null;
  const recurring = recurringFamilies(runs);

  const firstPass = passes[0];
  const passClusters = firstPass ? await listPassClusters(deps.pool, options.tenantId, firstPass.id) : [];
  const purity = clusterPurity(
    passClusters.map((cluster) => cluster.runIds),
    labelOf,
  );
  const qualifyingPurity = clusterPurity(
    passClusters.filter((cluster) => cluster.qualifying).map((cluster) => cluster.runIds),
    labelOf,
  );

  const procedures = await listProcedures(deps.pool, options.tenantId);
  const live: LiveSkill[] = procedures
    .filter((procedure) => procedure.enabled && procedure.supersededBy === null)
    .map((procedure) => ({ name: procedure.name, runIds: procedure.provenance.from_sessions }));
  const skillScores = scoreSkills(live, labelOf, recurring);

  deps.progress(`recall: ${heldout.length} held-out goals`);
  const topScore = (returned: ReadonlyArray<{ score: number }>) => returned[0]?.score ?? 0;
  const distributions: RecallScoreDistributions = { inSample: [], heldoutCovered: [], negatives: [] };
  const heldoutCases: RecallCase[] = [];
  const firstRecalled = new Map<string, string>();
  for (const line of heldout) {
    const returned = await deps.recall(options.tenantId, line.goal);
    heldoutCases.push({ goal: line.goal, family: line.family, returned: returned.map((match) => match.name) });
    if (returned[0]) firstRecalled.set(line.goal, returned[0].name);
    if (line.family === null) distributions.negatives.push(topScore(returned));
    else if (skillScores.owners.has(line.family)) distributions.heldoutCovered.push(topScore(returned));
  }
  const recallScores = scoreRecall(heldoutCases, skillScores.owners);

  const inSampleCases: Array<{ skill: string; returned: string[] }> = [];
  const inSampleTotal = live.reduce((sum, skill) => sum + skill.runIds.length, 0);
  deps.progress(`recall: ${inSampleTotal} in-sample goals`);
  for (const skill of live) {
    for (const runId of skill.runIds) {
      const goal = goalOf.get(runId);
      if (goal === undefined) continue;
      const returned = await deps.recall(options.tenantId, goal);
      inSampleCases.push({ skill: skill.name, returned: returned.map((match) => match.name) });
      distributions.inSample.push(topScore(returned));
    }
  }
  const inSample = scoreInSample(inSampleCases);

  let paired: PairedEvalReport | null = null;
  if (options.paired) {
    const toolsOf = new Map(
      procedures
        .filter((procedure) => procedure.enabled && procedure.supersededBy === null)
        .map((procedure) => [procedure.name, procedure.toolSequence.map((step) => step.tool)]),
    );
    const inputs = toCompare.map((line): PairedGoalInput => {
      const name = firstRecalled.get(line.goal);
      const tools = name === undefined ? undefined : toolsOf.get(name);
      return { ...line, recalled: name === undefined || tools === undefined ? null : { name, tools } };
    });
    const compared = comparePaired(inputs, options.paired.combination);
    await writeFile(options.paired.pairsFile, compared.pairs.map((pair) => `${JSON.stringify(pair)}\n`).join(''));
    deps.progress(`paired: ${compared.pairs.length} pairs → ${options.paired.pairsFile}`);
    paired = compared.report;
  }
  const finished = Date.now();

  return {
    tenantId: options.tenantId,
    settings: options.settings,
    corpus: {
      runs: runs.length,
      labelledFamilies: new Set(runs.flatMap((run) => (run.family === null ? [] : [run.family]))).size,
      unlabelledRuns: runs.filter((run) => run.family === null).length,
      recurringFamilies: recurring.size,
      heldoutPositives: recallScores.positives,
      heldoutNegatives: recallScores.negatives,
    },
    passes: passes.map(({ id, status, outcome, counts }) => ({ id, status, outcome, counts })),
    converged,
    clusters: { ...purity, qualifying: qualifyingPurity },
    skills: {
      total: procedures.length,
      live: live.length,
      mixing: skillScores.mixingSkills.length,
      familiesWithSeveralSkills: skillScores.familiesWithSeveralSkills.size,
      list: skillScores.compositions,
    },
    familyRecall: {
      recurring: recurring.size,
      recalled: skillScores.recalledFamilies.length,
      rate: rate(skillScores.recalledFamilies.length, recurring.size),
      missed: skillScores.missedFamilies,
    },
    heldout: options.heldoutFile
      ? {
          ...recallScores,
          wrongSkillRate: rate(recallScores.wrongSkill, recallScores.positives),
          top1Rate: rate(recallScores.top1, recallScores.positives),
          top2Rate: rate(recallScores.top2, recallScores.positives),
          top1CoveredRate: rate(recallScores.top1, recallScores.covered),
          top2CoveredRate: rate(recallScores.top2, recallScores.covered),
          falsePositiveRate: rate(recallScores.falsePositives, recallScores.negatives),
        }
      : null,
    inSample: { ...inSample, rate: rate(inSample.top1, inSample.goals) },
    paired,
    recallScores: distributions,
    timings: {
      ingestMs: ingested - started,
      passesMs: passesDone - ingested,
      scoringMs: finished - passesDone,
      totalMs: finished - started,
    },
  };
}
