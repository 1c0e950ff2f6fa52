/**
 * Recall and session-open latency.
 *
 *   node --import tsx bench/recall.bench.ts [--procedures 10000] [--queries 300] [--sessions 300]
 *                                           [--database-url postgresql://…]   (native; default embedded PGlite)
 *
 * Prints, in ms: the query embedding alone (all-MiniLM-L6-v2 int8 on CPU), recall's one read
 * alone (searchRecallVectors: HNSW + full-text + fusion + the pinned revision's body, top 2),
 * recall_skill end to end (embed + that read; last_used_at is recorded off the request path),
 * GET /v1/recall end to end over loopback HTTP (one request at a time: Fastify, auth, zod, recall,
 * JSON), and session open with a 20-entry catalog. Procedure embeddings are seeded random unit
 * vectors and the recall threshold is 0, so every query returns two skills: the figures measure
 * latency, not recall quality.
 */
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { createServices } from '../src/app/services.ts';
import { startApiServer } from '../src/api/server.ts';
import { loadConfig } from '../src/app/config.ts';
import { searchRecallVectors } from '../src/procedures/procedure-goal-vector-repository.ts';
import { MAX_RECALL_BODY_CHARS, recallSkill } from '../src/recall/recall.ts';
import { createRecallUsage } from '../src/recall/recall-usage.ts';
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
const TOKEN = 'bench-token-0123456789abcdef';

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
  const queryVectors = await embedder.embed(goals, 'goal');
  const search = async (index: number) =>
    searchRecallVectors(
      database.pool,
      BENCH_TENANT,
      { embedding: queryVectors[index % goals.length]!, modelId: embedder.modelId, text: goals[index % goals.length]! },
      { threshold: 0, acceptanceSlack: null, limit: 2, bodyChars: MAX_RECALL_BODY_CHARS },
    );

  for (let index = 0; index < 20; index++) await search(index);
  const searchMs: number[] = [];
  for (let index = 0; index < queries; index++) {
    const started = performance.now();
    await search(index);
    searchMs.push(performance.now() - started);
  }
  const usage = createRecallUsage(database.pool, { onError: (error) => process.stderr.write(`last_used_at: ${String(error)}\n`) });
  const deps = { pool: database.pool, embedder, threshold: 0, usage };
  const embed: number[] = [];
  const recall: number[] = [];
  for (let index = 0; index < queries; index++) {
    const goal = `${goals[index % goals.length]} (${index})`;
    let started = performance.now();
    await embedder.embed([goal], 'goal');
    embed.push(performance.now() - started);
    started = performance.now();
    const matches = await recallSkill(deps, BENCH_TENANT, { goal, topK: 2 });
    recall.push(performance.now() - started);
    if (matches.length !== 2) throw new Error(`recall returned ${matches.length} matches, expected 2`);
  }

  const config = loadConfig({});
  const logger = pino({ level: 'silent' });
  const api = await startApiServer(
    {
      ...createServices(config, database.pool, { logger }),
      skills: populated.skills,
      tokens: [{ token: TOKEN, tenantId: BENCH_TENANT, principal: 'bench', scopes: ['recall.read'] }],
      recall: (tenantId, request) => recallSkill(deps, tenantId, request),
    },
    { host: '127.0.0.1', port: 0 },
  );
  const http: number[] = [];
  try {
    for (let index = 0; index < queries + 20; index++) {
      const goal = `${goals[index % goals.length]} #${index}`;
      const started = performance.now();
      const response = await fetch(`${api.url}/v1/recall?goal=${encodeURIComponent(goal)}&topK=2`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      const body = (await response.json()) as { skills: unknown[] };
      if (index >= 20) http.push(performance.now() - started);
      if (response.status !== 200 || body.skills.length !== 2)
        throw new Error(`GET /v1/recall answered ${response.status} with ${body.skills.length} skills`);
    }
  } finally {
    await api.close();
  }
  await usage.flush();

  const agentSpecs = createAgentSpecRepository({ pool: database.pool, skills: populated.skills });
  await agentSpecs.set(
    BENCH_TENANT,
    'bench-agent',
    Array.from({ length: 20 }, (_, index) => benchSkillName(index)),
  );
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
    queryEmbeddingMs: summarize(embed),
    recallReadMs: summarize(searchMs),
    recallEndToEndMs: summarize(recall),
    httpRecallMs: summarize(http),
    sessionOpenMs: { ...summarize(open), catalogEntries },
  };
  process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
} finally {
  await database.close();
}
