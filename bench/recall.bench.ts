/**
 * Recall and session-open latency.
 *
 *   node --import tsx bench/recall.bench.ts [--procedures 10000] [--queries 300] [--sessions 300]
 *                                           [--database-url postgresql://…]   (native; default embedded PGlite)
 *
 * Prints, in ms: the vector search alone (findNearestProcedures, top 2), the query embedding
 * alone (all-MiniLM-L6-v2 int8 on CPU), recall_skill end to end (embed + search + resolve the
 * pinned revisions + touch), and session open with a 20-entry catalog (resolve 20 refs into
 * pins, render and count the catalog, insert the session and its event), and recall's
 * last_used_at update alone (touchProcedures on the two matches). Procedure embeddings
 * are seeded random unit vectors: the figures measure latency, not recall quality.
 */
import { parseArgs } from 'node:util';
import { findNearestProcedures, touchProcedures } from '../src/procedures/procedure-repository.ts';
import { recallSkill } from '../src/recall/recall.ts';
import { createAgentSpecRepository } from '../src/sessions/agent-spec-repository.ts';
import { openSession } from '../src/sessions/session-open.ts';
import { BENCH_TENANT, benchSkillName, loadEmbedder, openBenchDatabase, populate, summarize } from './session-bench-setup.ts';

const { values } = parseArgs({
  options: {
    procedures: { type: 'string', default: '10000' },
    queries: { type: 'string', default: '300' },
    sessions: { type: 'string', default: '300' },
    'database-url': { type: 'string' },
  },
});
const procedures = Number(values.procedures);
const queries = Number(values.queries);
const sessionCount = Number(values.sessions);

const goals = [
  'deploy the payment service to production',
  'summarize the open incidents from last night',
  'rotate the database credentials',
  'write release notes for version 2.4',
  'find why the nightly build failed',
  'refactor the billing module into smaller files',
  'triage new bug reports and label them',
  'back up the analytics warehouse',
];

const database = await openBenchDatabase(values['database-url']);
try {
  const embedder = await loadEmbedder();
  process.stderr.write(`populating ${procedures} skills + procedures on ${database.kind} Postgres…\n`);
  const populated = await populate(database, procedures, { dimension: embedder.dimension, modelId: embedder.modelId });
  const queryVectors = await embedder.embed(goals, 'query');

  for (let index = 0; index < 20; index++) {
    await findNearestProcedures(database.pool, BENCH_TENANT, queryVectors[index % goals.length]!, { limit: 2, recallableOnly: true });
  }
  const search: number[] = [];
  for (let index = 0; index < queries; index++) {
    const started = performance.now();
    await findNearestProcedures(database.pool, BENCH_TENANT, queryVectors[index % goals.length]!, { limit: 2, recallableOnly: true });
    search.push(performance.now() - started);
  }
  // recall_skill's bookkeeping alone: last_used_at on the two matches.
  const touch: number[] = [];
  for (let index = 0; index < queries; index++) {
    const matches = await findNearestProcedures(database.pool, BENCH_TENANT, queryVectors[index % goals.length]!, { limit: 2, recallableOnly: true });
    const started = performance.now();
    await touchProcedures(database.pool, BENCH_TENANT, matches.map((match) => match.id));
    touch.push(performance.now() - started);
  }
  const embed: number[] = [];
  const recall: number[] = [];
  const deps = { pool: database.pool, skills: populated.skills, embedder, similarityTau: 0 };
  for (let index = 0; index < queries; index++) {
    const goal = `${goals[index % goals.length]} (${index})`;
    let started = performance.now();
    await embedder.embed([goal], 'query');
    embed.push(performance.now() - started);
    started = performance.now();
    const matches = await recallSkill(deps, BENCH_TENANT, { goal, topK: 2 });
    recall.push(performance.now() - started);
    if (matches.length !== 2) throw new Error(`recall returned ${matches.length} matches, expected 2`);
  }

  const agentSpecs = createAgentSpecRepository({ pool: database.pool, skills: populated.skills });
  await agentSpecs.set(BENCH_TENANT, 'bench-agent', Array.from({ length: 20 }, (_, index) => benchSkillName(index)));
  const open: number[] = [];
  let catalogEntries = 0;
  for (let index = 0; index < sessionCount + 10; index++) {
    const started = performance.now();
    const session = await openSession({ pool: database.pool, skills: populated.skills, agentSpecs }, BENCH_TENANT, {
      agentId: 'bench-agent',
      tools: ['workspace.read_text'],
    });
    if (index >= 10) open.push(performance.now() - started);
    catalogEntries = session.pins.length;
  }

  const figures = {
    database: database.kind,
    procedures,
    setup: {
      installSeconds: Math.round(populated.installSeconds * 10) / 10,
      procedureInsertSeconds: Math.round(populated.insertSeconds * 10) / 10,
      hnswIndexSeconds: Math.round(populated.indexSeconds * 10) / 10,
    },
    vectorSearchMs: summarize(search),
    queryEmbeddingMs: summarize(embed),
    touchLastUsedMs: summarize(touch),
    recallEndToEndMs: summarize(recall),
    sessionOpenMs: { ...summarize(open), catalogEntries },
  };
  process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
} finally {
  await database.close();
}
