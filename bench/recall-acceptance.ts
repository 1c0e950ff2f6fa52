/**
 * Recall's acceptance rules compared offline, on what `skillsmith eval` learns: the live
 * procedures bench/learning-replay.ts writes (--procedures-out), each scored as recall's vector
 * side scores it — the best cosine between the goal and the goals of the successful runs the
 * procedure counted (exact, no HNSW approximation; without the when_to_use vector and without
 * the full-text fusion, so top-1 is by cosine) — over the corpus's held-out goals, the committed
 * negatives and, separately, the check-only negatives (bench/corpora/negative-goals-check.txt,
 * never used to calibrate).
 *
 *   node --import tsx bench/learning-replay.ts --corpus DIR --procedures-out DIR/procedures.json
 *   node --import tsx bench/recall-acceptance.ts --corpus DIR --procedures DIR/procedures.json [--json]
 *
 * Rules: a global threshold; and the per-procedure acceptance of src/procedures/recall-acceptance.ts
 * (a goal must come as close to the procedure's goals as its own goals come to each other, less a
 * slack) at several slacks. Also prints the margins the slack is calibrated from. Labels are read only to score (owners, held-out families).
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { createEmbedder } from '../src/embedding/embedder.ts';
import { loosestNearest, procedureAcceptance } from '../src/procedures/recall-acceptance.ts';
import { recurringFamilies, scoreSkills } from '../src/eval/scoring.ts';
import { requireTestModel, testModelSettings } from '../test/support/test-model.ts';
import { jsonLines, readFamilies } from './corpus-files.ts';

const { values } = parseArgs({
  options: {
    corpus: { type: 'string' },
    procedures: { type: 'string' },
    'check-negatives': { type: 'string', default: new URL('./corpora/negative-goals-check.txt', import.meta.url).pathname },
    json: { type: 'boolean', default: false },
  },
});

const runSchema = z.object({
  runId: z.string(),
  goal: z.string(),
  status: z.string(),
  toolCalls: z.array(z.object({ success: z.boolean() })),
});
const heldoutSchema = z.object({ goal: z.string(), family: z.string().nullable() });
const proceduresSchema = z.array(z.object({ id: z.string(), tools: z.array(z.string()), runIds: z.array(z.string()) }));

/** Query goals embedded as recall embeds them (the raw goal, the goal task), cached by text. */
async function embedQueries(goals: string[], cacheFile: string): Promise<Float32Array[]> {
  const cache = new Map<string, Float32Array>();
  if (existsSync(cacheFile))
    for (const [goal, vector] of Object.entries(JSON.parse(await readFile(cacheFile, 'utf8')) as Record<string, number[]>))
      cache.set(goal, Float32Array.from(vector));
  const missing = [...new Set(goals.filter((goal) => !cache.has(goal)))];
  if (missing.length > 0) {
    await requireTestModel();
    const embedder = await createEmbedder(testModelSettings());
    const vectors = await embedder.embed(missing, 'goal');
    missing.forEach((goal, index) => cache.set(goal, vectors[index]!));
    await writeFile(cacheFile, JSON.stringify(Object.fromEntries([...cache].map(([goal, vector]) => [goal, [...vector]]))));
  }
  return goals.map((goal) => cache.get(goal)!);
}

const dot = (a: Float32Array, b: Float32Array) => {
  let sum = 0;
  for (let index = 0; index < a.length; index++) sum += a[index]! * b[index]!;
  return sum;
};
const readGoalLines = async (file: string) =>
  (await readFile(file, 'utf8'))
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));

async function main(): Promise<void> {
  if (!values.corpus || !values.procedures) throw new Error('--corpus DIR and --procedures FILE are required');
  const runs = await jsonLines(join(values.corpus, 'runs.jsonl'), runSchema);
  const familyOf = await readFamilies(values.corpus);
  const family = (runId: string) => familyOf.get(runId) ?? null;
  const procedures = proceduresSchema.parse(JSON.parse(await readFile(values.procedures, 'utf8')));
  const heldout = await jsonLines(join(values.corpus, 'heldout.jsonl'), heldoutSchema);
  const checkNegatives = await readGoalLines(values['check-negatives']);
  const goalOf = new Map(runs.map((run) => [run.runId, run.goal]));
  const trainingGoals = procedures.map((procedure) => procedure.runIds.map((runId) => goalOf.get(runId)!));
  const queries = [...heldout.map((line) => line.goal), ...checkNegatives];
  const allGoals = [...new Set([...trainingGoals.flat(), ...queries])];
  const vectors = await embedQueries(allGoals, join(values.corpus, 'learn2-recall-embeddings.json'));
  const vectorOf = new Map(allGoals.map((goal, index) => [goal, vectors[index]!]));
  const procedureVectors = trainingGoals.map((goals) => goals.map((goal) => vectorOf.get(goal)!));

  const recurring = recurringFamilies(
    runs.map((run) => ({
      runId: run.runId,
      family: family(run.runId),
      status: run.status as 'completed',
      successfulSteps: run.toolCalls.filter((call) => call.success).length,
    })),
  );
  const { owners } = scoreSkills(
    procedures.map((procedure) => ({ name: procedure.id, runIds: procedure.runIds })),
    family,
    recurring,
  );

  /** Each query's best cosine per procedure. */
  const scoresOf = (goal: string) => procedureVectors.map((goals) => Math.max(...goals.map((vector) => dot(vector, vectorOf.get(goal)!))));
  const heldoutScores = heldout.map((line) => ({ family: line.family, scores: scoresOf(line.goal), goal: line.goal }));
  const checkScores = checkNegatives.map((goal) => ({ family: null, scores: scoresOf(goal), goal }));

  type Rule = { name: string; accepts: (procedure: number, score: number) => boolean };
  const evaluate = (rule: Rule) => {
    let covered = 0,
      top1 = 0,
      top2 = 0,
      falsePositives = 0,
      checkFalsePositives = 0;
    const returnedOf = (scores: number[]) =>
      scores
        .map((score, index) => ({ score, index }))
        .filter(({ score, index }) => rule.accepts(index, score))
        .sort((a, b) => b.score - a.score)
        .map(({ index }) => procedures[index]!.id);
    const falsePositiveGoals: string[] = [];
    for (const line of heldoutScores) {
      const returned = returnedOf(line.scores);
      if (line.family === null) {
        if (returned.length > 0) {
          falsePositives += 1;
          falsePositiveGoals.push(line.goal);
        }
        continue;
      }
      const owning = new Set(owners.get(line.family) ?? []);
      if (owning.size === 0) continue;
      covered += 1;
      if (returned[0] !== undefined && owning.has(returned[0])) top1 += 1;
      if (returned.slice(0, 2).some((name) => owning.has(name))) top2 += 1;
    }
    for (const line of checkScores)
      if (returnedOf(line.scores).length > 0) {
        checkFalsePositives += 1;
        falsePositiveGoals.push(`(check) ${line.goal}`);
      }
    return {
      rule: rule.name,
      covered,
      top1: top1 / covered,
      top2: top2 / covered,
      falsePositives,
      checkFalsePositives,
      falsePositiveGoals,
    };
  };

  const rules: Rule[] = [];
  for (const threshold of [0.415, 0.45, 0.5])
    rules.push({ name: `global ${threshold}`, accepts: (_procedure, score) => score >= threshold });
  for (const slack of [0, 0.025, 0.05, 0.075, 0.1, 0.15]) {
    const acceptance = procedureVectors.map((goals) => procedureAcceptance(goals, { slack, floor: 0.415, cap: 1 }));
    rules.push({ name: `own acceptance, slack ${slack}, no cap`, accepts: (procedure, score) => score >= acceptance[procedure]! });
  }
  // Bars robust to near-copy goal sets (the demo's templated goals): capped, or a share of the way from the floor.
  for (const cap of [0.45, 0.5, 0.55, 0.6]) {
    const acceptance = procedureVectors.map((goals) => procedureAcceptance(goals, { slack: 0.05, floor: 0.415, cap }));
    rules.push({ name: `slack 0.05, cap ${cap}`, accepts: (procedure, score) => score >= acceptance[procedure]! });
  }
  for (const reach of [0.25, 0.5, 0.75]) {
    // The bar at most `reach` of the way from the floor to the loosest cosine (measured, not adopted).
    const acceptance = procedureVectors.map((goals) => {
      const loosest = loosestNearest(goals);
      return loosest === null ? 0.415 : Math.max(0.415, Math.min(loosest - 0.05, 0.415 + reach * (loosest - 0.415)));
    });
    rules.push({ name: `slack 0.05, reach ${reach}`, accepts: (procedure, score) => score >= acceptance[procedure]! });
  }
  const results = rules.map(evaluate);
  // The margins the slack is read from: a covered held-out goal's best cosine to an owning
  // procedure minus that procedure's loosest leave-one-out cosine; a negative's highest such margin
  // over every procedure. A negative is rejected by every procedure when its margin is below −slack.
  const loosest = procedureVectors.map((goals) => procedureAcceptance(goals, { slack: 0, floor: -1, cap: 1 }));
  const margins = {
    heldout: heldoutScores
      .filter((line) => line.family !== null && (owners.get(line.family)?.length ?? 0) > 0)
      .map((line) => {
        const owning = new Set(owners.get(line.family!));
        return Math.max(...procedures.map((procedure, index) => (owning.has(procedure.id) ? line.scores[index]! - loosest[index]! : -2)));
      })
      .sort((a, b) => a - b),
    negatives: heldoutScores
      .filter((line) => line.family === null)
      .map((line) => Math.max(...line.scores.map((score, index) => score - loosest[index]!)))
      .sort((a, b) => b - a),
    check: checkScores.map((line) => Math.max(...line.scores.map((score, index) => score - loosest[index]!))).sort((a, b) => b - a),
  };
  const acceptances = loosest.map((value) => Math.round(value * 100) / 100).sort((a, b) => a - b);
  const round = (value: number) => Math.round(value * 1000) / 1000;
  const negativeBest = (lines: typeof heldoutScores) =>
    lines
      .filter((line) => line.family === null)
      .map((line) => round(Math.max(...line.scores)))
      .sort((a, b) => b - a)
      .slice(0, 5);
  if (values.json) {
    process.stdout.write(`${JSON.stringify({ corpus: values.corpus, procedures: procedures.length, results })}\n`);
    return;
  }
  process.stdout.write(
    `${values.corpus}: ${procedures.length} live procedures; negatives' best cosines (top 5) ${negativeBest(heldoutScores).join(', ')}; check negatives ${negativeBest(checkScores).join(', ')}\n`,
  );
  process.stdout.write(
    `loosest leave-one-out cosine per procedure: ${acceptances.join(' ')}\n` +
      `margins (best − loosest): held-out covered lowest ${margins.heldout.slice(0, 8).map(round).join(', ')} (p5 ${round(margins.heldout[Math.floor(0.05 * (margins.heldout.length - 1))]!)}); negatives highest ${margins.negatives.slice(0, 5).map(round).join(', ')}; check negatives highest ${margins.check.slice(0, 5).map(round).join(', ')}\n`,
  );
  for (const result of results)
    process.stdout.write(
      `${result.rule.padEnd(44)} covered ${result.covered} top-1 ${round(result.top1)} top-2 ${round(result.top2)} FP ${result.falsePositives}/25 check FP ${result.checkFalsePositives}/${checkNegatives.length}${result.falsePositiveGoals.length > 0 ? `  [${result.falsePositiveGoals.slice(0, 3).join(' | ')}]` : ''}\n`,
    );
}

await main();
