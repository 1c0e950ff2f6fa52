/**
 * The demo's recall (`skillsmith demo`) under recall's acceptance rules, offline: the procedures
 * a finished demo learned (read from its SKILLSMITH_HOME's embedded database: each live
 * procedure's learned-from goal texts and the sample family its runs belong to), and each
 * family's new goal as the demo asks it (seed 2027, the first paraphrase the sample does not
 * contain).
 * Scored as bench/recall-acceptance.ts scores: the best cosine over a procedure's goals, exact,
 * no when_to_use, no full-text fusion. Prints, per rule, how many new goals get their own task
 * first and how many get a wrong skill anywhere in the top 2.
 *
 *   SKILLSMITH_HOME=DIR node bin/skillsmith.js demo --json   (then stop its stack)
 *   node --import tsx bench/recall-acceptance-demo.ts --home DIR
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { createEmbedder } from '../src/embedding/embedder.ts';
import { loosestNearest, procedureAcceptance } from '../src/procedures/recall-acceptance.ts';
import { generateRuns } from '../src/demo/synthetic-runs.ts';
import { requireTestModel, testModelSettings } from '../test/support/test-model.ts';

const FLOOR = 0.415;
const dot = (a: Float32Array, b: Float32Array) => {
  let sum = 0;
  for (let index = 0; index < a.length; index++) sum += a[index]! * b[index]!;
  return sum;
};

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { home: { type: 'string' } } });
  if (!values.home) throw new Error("--home DIR (a finished demo's SKILLSMITH_HOME) is required");
  const sample = generateRuns({ seed: 7, runs: 200 });
  const known = new Set(sample.map((run) => run.report.goal));
  const familyOf = new Map(sample.map((run) => [run.report.runId, run.family]));
  const db = new PGlite(join(values.home, 'pgdata'), { extensions: { vector } });
  const { rows } = await db.query<{ name: string; source: string; text: string }>(
    `SELECT p.name, gv.source, gv.text FROM procedures p JOIN procedure_goal_vectors gv ON gv.procedure_id = p.id
      WHERE p.enabled AND p.superseded_by IS NULL AND gv.source LIKE 'run:%' ORDER BY p.name, gv.source`,
  );
  await db.close();
  const goalsOf = new Map<string, string[]>();
  const procedureFamily = new Map<string, string>();
  for (const row of rows) {
    goalsOf.set(row.name, [...(goalsOf.get(row.name) ?? []), row.text]);
    const family = familyOf.get(row.source.slice('run:'.length));
    if (family && !procedureFamily.has(row.name)) procedureFamily.set(row.name, family);
  }
  const families = [...goalsOf.keys()].filter((name) => procedureFamily.has(name));
  const fresh = families.map((name) =>
    generateRuns({ seed: 2027, runs: 40, families: [procedureFamily.get(name)!], distractorRate: 0 })
      .map((run) => run.report.goal)
      .find((goal) => !known.has(goal))!,
  );
  await requireTestModel();
  const embedder = await createEmbedder(testModelSettings());
  const procedureVectors = await Promise.all(families.map((family) => embedder.embed(goalsOf.get(family)!, 'goal')));
  const freshVectors = await embedder.embed(fresh, 'goal');
  const scores = freshVectors.map((goal) => procedureVectors.map((goals) => Math.max(...goals.map((vector) => dot(goal, vector)))));
  /** Each rule: the bar of a procedure from its learned goals (the same candidates as bench/recall-acceptance.ts). */
  const reachBar = (reach: number) => (goals: readonly Float32Array[]) => {
    const loosest = loosestNearest(goals);
    return loosest === null ? FLOOR : Math.max(FLOOR, Math.min(loosest - 0.05, FLOOR + reach * (loosest - FLOOR)));
  };
  const rules: Array<[string, (goals: readonly Float32Array[]) => number]> = [
    ['slack 2 (acceptance off)', (goals) => procedureAcceptance(goals, { slack: 2, floor: FLOOR, cap: 1 })],
    ['slack 0.05, no cap', (goals) => procedureAcceptance(goals, { slack: 0.05, floor: FLOOR, cap: 1 })],
    ...[0.45, 0.5, 0.55, 0.6].map((cap): [string, (goals: readonly Float32Array[]) => number] => [
      `slack 0.05, cap ${cap}`,
      (goals) => procedureAcceptance(goals, { slack: 0.05, floor: FLOOR, cap }),
    ]),
    ...[0.25, 0.5, 0.75].map((reach): [string, (goals: readonly Float32Array[]) => number] => [
      `slack 0.05, reach ${reach}`,
      reachBar(reach),
    ]),
  ];
  for (const [index, family] of families.entries()) {
    const own = scores[index]![index]!;
    const bars = rules.map(([, bar]) => bar(procedureVectors[index]!).toFixed(3));
    process.stdout.write(
      `${family.padEnd(22)} goals ${goalsOf.get(family)!.length} own ${own.toFixed(3)} bars ${bars.join(' ')}  "${fresh[index]}"\n`,
    );
  }
  for (const [name, bar] of rules) {
    const bars = procedureVectors.map(bar);
    let first = 0,
      wrong = 0;
    for (const [index, row] of scores.entries()) {
      const returned = row
        .map((score, procedure) => ({ score, procedure }))
        .filter(({ score, procedure }) => score >= FLOOR && score >= bars[procedure]!)
        .sort((a, b) => b.score - a.score)
        .slice(0, 2);
      if (returned[0]?.procedure === index) first += 1;
      wrong += returned.filter(({ procedure }) => procedure !== index).length;
    }
    process.stdout.write(`${name.padEnd(28)} own task first ${first}/${families.length}, wrong skills in top 2 ${wrong}\n`);
  }
}

await main();
