import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import pgvector from 'pgvector';
import { pino } from 'pino';
import { negativeHeldout } from '../../bench/corpora/negative-goals.ts';
import { createServices } from '../../src/app/services.ts';
import { loadConfig } from '../../src/app/config.ts';
import { embedMissingGoals } from '../../src/embedding/embed-goals.ts';
import { createEmbedder, type Embedder } from '../../src/embedding/embedder.ts';
import { ensureEmbeddingModel, forgetOtherModels } from '../../src/embedding/goal-embedding-repository.ts';
import { TenantEmbeddingModelMismatch } from '../../src/embedding/embedding-errors.ts';
import {
  countProcedureGoalVectors,
  searchRecallVectors,
  storeLearnedGoalVectors,
} from '../../src/procedures/procedure-goal-vector-repository.ts';
import {
  countProcedureRuns,
  findProcedureByName,
  insertProcedure,
  markSuperseded,
  setProcedureEnabled,
} from '../../src/procedures/procedure-repository.ts';
import { buildRecallSpace } from '../../src/recall/recall-space-repository.ts';
import { QueryEmbeddings } from '../../src/recall/query-embeddings.ts';
import { RecallSpaces } from '../../src/recall/recall-space-cache.ts';
import { recallSkill, recallSkills, TRUNCATION_MARKER, type RecallDependencies } from '../../src/recall/recall.ts';
import { ACCEPTANCE_CAP, DEFAULT_ACCEPTANCE_SLACK, loosestNearest } from '../../src/procedures/recall-acceptance.ts';
import { defaultRecallThreshold } from '../../src/recall/recall-threshold.ts';
import { createRecallUsage } from '../../src/recall/recall-usage.ts';
import { upsertRuns } from '../../src/runs/run-repository.ts';
import { serializeSkillDocument } from '../../src/skills/skill-format.ts';
import { isEmbeddedDatabase, withTransaction } from '../../src/store/database.ts';
import { vectorParameter } from '../../src/store/vector-parameter.ts';
import { createSkillRepository } from '../../src/store/skill-repository.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { testRun } from '../support/run-reports.ts';
import { requireTestModel, testModelSettings } from '../support/test-model.ts';

/** A fixed corpus: three procedures, each learned from three runs whose goals say the same job in different words. */
const corpus = [
  {
    name: 'deploy-service',
    whenToUse: 'Deploy a service build to an environment and check that it is healthy.',
    tools: ['ci.build', 'deploy.run', 'deploy.status'],
    goals: [
      'deploy billing-api to staging',
      'ship the checkout service to production',
      'roll out the search service build to the canary cluster',
    ],
    fresh: 'deploy the notifications service to staging',
  },
  {
    name: 'rotate-credentials',
    whenToUse: 'Rotate a credential: issue a new secret, store it in the vault, revoke the old one.',
    tools: ['vault.issue', 'vault.store', 'vault.revoke'],
    goals: [
      'rotate the API key for the payments integration',
      'renew the expired database password',
      'replace the leaked token for the github integration',
    ],
    fresh: 'the stripe api key leaked, rotate it',
  },
  {
    name: 'summarize-incidents',
    whenToUse: 'Summarise the incidents of a period for an on-call handover.',
    tools: ['incidents.list', 'incidents.read', 'notes.write'],
    goals: [
      "summarise last night's incidents for the on-call handover",
      'write up the outages from this week',
      'give me a digest of the pages we got over the weekend',
    ],
    fresh: 'summarize the incidents from yesterday for the handover',
  },
  {
    // A templated job: its goals lie close to each other, so its own acceptance sits above the threshold.
    name: 'forecast-weather',
    whenToUse: 'Look up the weather forecast for a city and day.',
    tools: ['geo.lookup', 'weather.forecast', 'notes.write'],
    goals: [
      'what is the weather forecast for Oslo tomorrow',
      'what is the weather forecast for Lisbon tomorrow',
      'what is the weather forecast for Nairobi tomorrow',
      'what is the weather forecast for Denver tomorrow',
    ],
    fresh: 'is it going to rain in Oslo this weekend?',
  },
] as const;

/**
 * A job learned from near-copies of one template (the demo's seeded sample, `skillsmith demo`): its
 * goals lie 0.7 or more from each other, and the new goal says the job in other words.
 */
const nearCopies = {
  name: 'translate-docs',
  whenToUse: 'Translate a documentation page into another language and commit it.',
  tools: ['doc.fetch', 'translate.text', 'doc.write', 'vcs.commit'],
  goals: [
    'localise the rate limits guide for French readers',
    'localise the rate limits guide for Portuguese readers',
    'make the billing FAQ documentation available in French',
    'make the billing FAQ documentation available in German',
    'make the rate limits documentation available in Japanese',
    'make the webhooks documentation available in Korean',
    'make the webhooks documentation available in Spanish',
    'port the billing FAQ page to French',
    'port the rate limits page to Japanese',
    'produce a Korean translation of billing FAQ',
    'translate the rate limits page into Japanese',
    'translate the rate limits page into Spanish',
    'translate the webhooks page into Korean',
    'translate the webhooks page into Portuguese',
  ],
  fresh: 'produce a Portuguese translation of API authentication',
} as const;

interface LearnedJob {
  name: string;
  whenToUse: string;
  tools: readonly string[];
  goals: readonly string[];
}

const LONG_BODY = `# Deploy\n\n${'1. Build, deploy and verify the service; roll back when the health check fails.\n'.repeat(40)}`;

const runReport = (tenantId: string, runId: string, goal: string, tools: readonly string[]) =>
  testRun(
    tenantId,
    runId,
    goal,
    tools.map((tool) => ({ tool, success: true })),
  );

describe('recall_skill: a procedure found by what it is for', () => {
  let database: TestDatabase;
  let embedder: Embedder;
  let deps: RecallDependencies;
  const tenantId = 'acme';
  const threshold = defaultRecallThreshold('sentence-transformers/all-MiniLM-L6-v2')!;

  async function learn(tenant: string, procedure: LearnedJob, body: string) {
    const skills = createSkillRepository({ pool: database.pool, defaultLicense: 'MIT' });
    const document = serializeSkillDocument(
      { name: procedure.name, version: '1.0.0', description: procedure.whenToUse, requiredTools: [...procedure.tools], license: 'MIT' },
      body,
    );
    const revision = await skills.install(
      tenant,
      { directoryName: procedure.name, files: new Map([['SKILL.md', new TextEncoder().encode(document)]]) },
      { source: 'operator' },
    );
    const [whenToUse] = await embedder.embed([procedure.whenToUse], 'goal');
    const runIds = procedure.goals.map((_, index) => `${procedure.name}-${index + 1}`);
    await withTransaction(database.pool, async (client) => {
      const stored = await insertProcedure(client, tenant, {
        skillId: revision.skillId,
        name: procedure.name,
        revision: revision.revision,
        whenToUse: procedure.whenToUse,
        toolSequence: procedure.tools.map((tool) => ({ tool, argumentNames: [] })),
        toolsRequired: [...procedure.tools],
        successCount: 0,
        attemptCount: 0,
        fromSessions: [],
        embedding: whenToUse!,
        embeddingModel: embedder.modelId,
      });
      await countProcedureRuns(
        client,
        tenant,
        stored.id,
        'pass-1',
        runIds.map((runId) => ({ runId, success: true })),
        embedder.modelId,
      );
      await storeLearnedGoalVectors(client, tenant, stored.id, embedder.modelId);
    });
  }

  /** A tenant of its own: the job's runs recorded and embedded, then the job learned from them. */
  async function learnFromRuns(tenant: string, procedure: LearnedJob) {
    await upsertRuns(
      database.pool,
      tenant,
      procedure.goals.map((goal, index) => runReport(tenant, `${procedure.name}-${index + 1}`, goal, procedure.tools)),
    );
    await embedMissingGoals(database.pool, embedder, tenant, { pageSize: 32 });
    await learn(tenant, procedure, `# ${procedure.name}\n\n1. Do it.\n`);
  }

  beforeAll(async () => {
    await requireTestModel();
    database = await openTestDatabase();
    embedder = await createEmbedder(testModelSettings());
    deps = { pool: database.pool, embedder, threshold };
    for (const tenant of [tenantId, 'globex']) {
      const procedures = tenant === tenantId ? corpus : corpus.slice(2, 3);
      await upsertRuns(
        database.pool,
        tenant,
        procedures.flatMap((procedure) =>
          procedure.goals.map((goal, index) => runReport(tenant, `${procedure.name}-${index + 1}`, goal, procedure.tools)),
        ),
      );
      await embedMissingGoals(database.pool, embedder, tenant, { pageSize: 32 });
      for (const procedure of procedures)
        await learn(tenant, procedure, procedure.name === 'deploy-service' ? LONG_BODY : `# ${procedure.name}\n\n1. Do it.\n`);
    }
  });

  afterAll(async () => {
    await database?.close();
  });

  it('stores one recall vector per learned goal plus the when_to_use', async () => {
    const procedure = await findProcedureByName(database.pool, tenantId, 'rotate-credentials');
    expect(await countProcedureGoalVectors(database.pool, tenantId, procedure!.id, embedder.modelId)).toBe(4);
  });

  it('recalls a new goal of each task first, at the calibrated threshold, with the contract fields', async () => {
    for (const procedure of corpus) {
      const matches = await recallSkill(deps, tenantId, { goal: procedure.fresh });
      expect(matches[0], procedure.fresh).toMatchObject({
        name: procedure.name,
        whenToUse: procedure.whenToUse,
        toolsRequired: [...procedure.tools],
        revision: 1,
      });
      expect(matches[0]!.score).toBeGreaterThanOrEqual(threshold);
      expect(matches.length).toBeLessThanOrEqual(2);
      expect(Object.keys(matches[0]!).sort()).toEqual(['body', 'name', 'revision', 'score', 'toolsRequired', 'whenToUse']);
    }
  });

  it("recalls a batch's goals (a review's) as it recalls each alone, on one connection whose generic plans end with the batch", async () => {
    const goals = corpus.map((procedure) => procedure.fresh);
    const connect = vi.spyOn(database.pool, 'connect');
    let together: Awaited<ReturnType<typeof recallSkills>>;
    let connections: number;
    try {
      together = await recallSkills(deps, tenantId, goals);
    } finally {
      connections = connect.mock.calls.length;
      connect.mockRestore();
    }
    const alone: Array<Awaited<ReturnType<typeof recallSkill>>> = [];
    for (const goal of goals) alone.push(await recallSkill(deps, tenantId, { goal }));
    expect(together.map((matches) => matches.map(({ name, revision }) => ({ name, revision })))).toEqual(
      alone.map((matches) => matches.map(({ name, revision }) => ({ name, revision }))),
    );
    together.forEach((matches, index) => matches.forEach((match, rank) => expect(match.score).toBeCloseTo(alone[index]![rank]!.score, 5)));
    // On a native server (SKILLSMITH_TEST_DATABASE_URL) the searches share one connection, whose
    // plan_cache_mode is PostgreSQL's default again once the batch is done (the embedded one plans every statement).
    if (!isEmbeddedDatabase(database.pool)) {
      expect(connections).toBe(1);
      const client = await database.pool.connect();
      try {
        expect((await client.query<{ plan_cache_mode: string }>('SHOW plan_cache_mode')).rows[0]!.plan_cache_mode).toBe('auto');
      } finally {
        client.release();
      }
    }
  });

  it('answers a repeated goal from the query embeddings it keeps, exactly as embedding it again would', async () => {
    const queryEmbeddings = new QueryEmbeddings();
    const embed = vi.spyOn(embedder, 'embed');
    try {
      const goal = corpus[0].fresh;
      const fresh = await recallSkill(deps, tenantId, { goal });
      const first = await recallSkill({ ...deps, queryEmbeddings }, tenantId, { goal });
      const repeated = await recallSkill({ ...deps, queryEmbeddings }, tenantId, { goal: `  ${goal}  ` });
      expect(first).toEqual(fresh);
      expect(repeated).toEqual(fresh);
      expect(embed).toHaveBeenCalledTimes(2);
    } finally {
      embed.mockRestore();
    }
  });

  it("sends the query vector in pgvector's binary format: the server reads the float4 values the text form gives", async () => {
    const [vector] = await embedder.embed(['deploy the notifications service to staging'], 'goal');
    const { rows } = await database.pool.query<{ same: boolean; dimension: number }>(
      'SELECT $1::vector(384) = $2::vector(384) AS same, vector_dims($1::vector) AS dimension',
      [vectorParameter(vector!), pgvector.toSql(Array.from(vector!))],
    );
    expect(rows[0]).toEqual({ same: true, dimension: 384 });
  });

  it('returns nothing for unrelated goals', async () => {
    const negatives = (await negativeHeldout()).slice(0, 10).map((line) => line.goal);
    for (const goal of negatives) expect(await recallSkill(deps, tenantId, { goal }), goal).toEqual([]);
  });

  it("rejects a goal that clears the threshold but lies farther from a procedure's goals than they lie from each other", async () => {
    const procedure = await findProcedureByName(database.pool, tenantId, 'forecast-weather');
    const {
      rows: [stored],
    } = await database.pool.query<{ recall_loosest: number | null }>(
      'SELECT recall_loosest FROM procedures WHERE tenant_id = $1 AND id = $2',
      [tenantId, procedure!.id],
    );
    // The acceptance stored at install is the loosest leave-one-out cosine among the learned goals.
    const goals = await embedder.embed([...corpus[3].goals], 'goal');
    const loosest = loosestNearest(goals)!;
    expect(stored!.recall_loosest).toBeCloseTo(loosest, 4);
    expect(loosest - DEFAULT_ACCEPTANCE_SLACK).toBeGreaterThan(threshold);

    // About weather, not a forecast for a city and day: above the global threshold (its best cosine is
    // with the generic when_to_use), below the procedure's own acceptance over its learned goals.
    const goal = 'how do weather forecasts work?';
    const [vector] = await embedder.embed([goal], 'goal');
    const bestOverGoals = Math.max(...goals.map((learned) => learned.reduce((sum, value, index) => sum + value * vector![index]!, 0)));
    expect(bestOverGoals).toBeGreaterThanOrEqual(threshold);
    expect(bestOverGoals).toBeLessThan(loosest - DEFAULT_ACCEPTANCE_SLACK);
    const withoutAcceptance = await recallSkill({ ...deps, acceptanceSlack: 2 }, tenantId, { goal });
    expect(withoutAcceptance.map((match) => match.name)).toEqual(['forecast-weather']);
    expect(await recallSkill(deps, tenantId, { goal })).toEqual([]);
    // With the threshold off (calibration) every gate is off: the goal gets its best score.
    expect((await recallSkill({ ...deps, threshold: -1 }, tenantId, { goal, topK: 1 })).map((match) => match.name)).toEqual([
      'forecast-weather',
    ]);
  });

  it('abstains for a job without a skill: a run of another job nearer the goal than anything the procedure is for', async () => {
    const tenant = 'initech';
    const rotate = corpus[1];
    await learnFromRuns(tenant, rotate);
    const goal = 'find out who used the leaked token for the slack integration';
    // Before the tenant has done that job, its nearest skill is handed out: a neighbour, not the job.
    expect((await recallSkill(deps, tenant, { goal })).map((match) => match.name)).toEqual([rotate.name]);
    // A run of the other job (reading the vault's access log, not rotating), which no procedure covers.
    await upsertRuns(database.pool, tenant, [
      runReport(tenant, 'audit-1', 'find who used the leaked token for the github integration', ['vault.audit_log', 'report.write']),
    ]);
    await embedMissingGoals(database.pool, embedder, tenant, { pageSize: 32 });
    expect(await recallSkill(deps, tenant, { goal })).toEqual([]);
    // Its own job's goals are still answered.
    expect((await recallSkill(deps, tenant, { goal: rotate.fresh })).map((match) => match.name)[0]).toBe(rotate.name);
    // An uncovered run that followed the procedure (most of its tools) is evidence for it, not against.
    await upsertRuns(database.pool, tenant, [
      runReport(tenant, 'rotate-4', 'audit who accessed the slack api key, then rotate it', [...rotate.tools, 'report.write']),
    ]);
    await embedMissingGoals(database.pool, embedder, tenant, { pageSize: 32 });
    expect(
      (await recallSkill(deps, tenant, { goal: 'audit who accessed the slack api key, then rotate it' })).map((match) => match.name),
    ).toEqual([rotate.name]);
    // Calibration (threshold off) turns the rule off with every other gate.
    expect((await recallSkill({ ...deps, threshold: -1 }, tenant, { goal, topK: 1 })).map((match) => match.name)).toEqual([rotate.name]);
  });

  it("in the tenant's recall space: abstains for a run of another job, answers its own jobs, and follows a space rebuilt since", async () => {
    const tenant = 'soylent';
    const [deploy, rotate] = [corpus[0], corpus[1]];
    await learnFromRuns(tenant, deploy);
    await learnFromRuns(tenant, rotate);
    // Another job (reading the vault's access log, not rotating): three calls, none of a procedure's tools.
    await upsertRuns(database.pool, tenant, [
      runReport(tenant, 'audit-1', 'find who used the leaked token for the github integration', [
        'vault.audit_log',
        'report.fetch',
        'report.write',
      ]),
    ]);
    await embedMissingGoals(database.pool, embedder, tenant, { pageSize: 32 });
    const settings = { minSteps: 3, minOccurrences: 3 };
    const first = await buildRecallSpace(database.pool, tenant, embedder.modelId, settings, null);
    expect(first).toMatchObject({ procedures: 2, otherJobRuns: 1 });
    const spaces = new RecallSpaces();
    const inSpace = { ...deps, spaces };
    const names = async (goal: string) => (await recallSkill(inSpace, tenant, { goal })).map((match) => match.name);

    expect(await names('find out who used the leaked token for the slack integration')).toEqual([]);
    // A goal in both jobs' words ("leaked", "rotate it") lies as near the audit run as the rotations here; one in the job's own words does not.
    expect((await names('rotate the stripe api key'))[0]).toBe(rotate.name);
    expect((await names(deploy.fresh))[0]).toBe(deploy.name);
    expect((await spaces.current(database.pool, tenant, embedder.modelId))!.version).toBe(first!.version);

    // A pass rebuilds the space under the cached one: the search notices and reads the new version.
    const second = await buildRecallSpace(database.pool, tenant, embedder.modelId, settings, null);
    expect(second!.version).toBe(first!.version + 1);
    expect((await names('rotate the stripe api key'))[0]).toBe(rotate.name);
    expect((await spaces.current(database.pool, tenant, embedder.modelId))!.version).toBe(second!.version);
    // Unrelated goals get nothing in the space as outside it.
    const negatives = (await negativeHeldout()).slice(0, 5).map((line) => line.goal);
    for (const goal of negatives) expect(await names(goal), goal).toEqual([]);
  });

  it("caps a procedure's own acceptance: near-copy learned goals do not ask a new goal to be a copy", async () => {
    const tenant = 'initech';
    await learnFromRuns(tenant, nearCopies);
    const goals = await embedder.embed([...nearCopies.goals], 'goal');
    const [vector] = await embedder.embed([nearCopies.fresh], 'goal');
    const best = Math.max(...goals.map((learned) => learned.reduce((sum, value, index) => sum + value * vector![index]!, 0)));
    // Uncapped, the loosest cosine less the slack would reject the new goal; the cap lets it through.
    expect(loosestNearest(goals)! - DEFAULT_ACCEPTANCE_SLACK).toBeGreaterThan(best);
    expect(best).toBeGreaterThanOrEqual(ACCEPTANCE_CAP);
    expect((await recallSkill(deps, tenant, { goal: nearCopies.fresh })).map((match) => match.name)).toEqual([nearCopies.name]);
  });

  it('fuses the full-text match by reciprocal rank', async () => {
    // "leaked" and "token" occur only in a goal rotate-credentials was learned from.
    const [embedding] = await embedder.embed(['the leaked token'], 'goal');
    const [first] = await searchRecallVectors(
      database.pool,
      tenantId,
      { embedding: embedding!, modelId: embedder.modelId, text: 'the leaked token' },
      { threshold: 0, acceptanceSlack: null, limit: 3, bodyChars: 1500 },
    );
    expect(first!.name).toBe('rotate-credentials');
    // First in both lists: 1/(60 + 1) from each.
    expect(first!.fused).toBeCloseTo(2 / 61, 6);
    const [withoutWords] = await searchRecallVectors(
      database.pool,
      tenantId,
      { embedding: embedding!, modelId: embedder.modelId, text: 'zzz' },
      { threshold: 0, acceptanceSlack: null, limit: 3, bodyChars: 1500 },
    );
    expect(withoutWords!.fused).toBeCloseTo(1 / 61, 6);
  });

  it('cuts a body at 1,500 characters with the marker', async () => {
    const [deploy] = await recallSkill(deps, tenantId, { goal: corpus[0].fresh });
    expect(deploy!.body).toBe(`${LONG_BODY.slice(0, 1500)}${TRUNCATION_MARKER}`);
  });

  it("filters by tenant: another tenant's procedures are never returned", async () => {
    expect(await recallSkill(deps, 'globex', { goal: corpus[0].fresh })).toEqual([]);
    expect((await recallSkill(deps, 'globex', { goal: corpus[2].fresh })).map((match) => match.name)).toEqual(['summarize-incidents']);
    expect(await recallSkill(deps, 'initech', { goal: corpus[2].fresh })).toEqual([]);
  });

  it('never returns a disabled or superseded procedure', async () => {
    const goal = corpus[1].fresh;
    await setProcedureEnabled(database.pool, tenantId, 'rotate-credentials', false);
    expect((await recallSkill({ ...deps, threshold: 0 }, tenantId, { goal, topK: 5 })).map((match) => match.name)).not.toContain(
      'rotate-credentials',
    );
    await setProcedureEnabled(database.pool, tenantId, 'rotate-credentials', true);
    expect((await recallSkill(deps, tenantId, { goal }))[0]!.name).toBe('rotate-credentials');

    const rotate = await findProcedureByName(database.pool, 'globex', 'summarize-incidents');
    const other = await findProcedureByName(database.pool, tenantId, 'summarize-incidents');
    await withTransaction(database.pool, (client) => markSuperseded(client, 'globex', rotate!.id, other!.id));
    expect(await recallSkill({ ...deps, threshold: 0 }, 'globex', { goal: corpus[2].fresh, topK: 5 })).toEqual([]);
  });

  it("keeps a tenant's configuration between recalls, and resolves it again once the tenant's models change", async () => {
    const tenant = 'umbrella';
    const job = corpus[0];
    await learnFromRuns(tenant, job);
    const statements: string[] = [];
    const pool = new Proxy(database.pool, {
      get(target, property, receiver) {
        if (property !== 'query') return Reflect.get(target, property, receiver) as unknown;
        return (query: string | { text: string }, ...rest: unknown[]) => {
          statements.push(typeof query === 'string' ? query : query.text);
          return (target.query as (...args: unknown[]) => unknown)(query, ...rest);
        };
      },
    });
    const config = loadConfig({
      SKILLSMITH_EMBEDDING_MODEL: embedder.modelId,
      SKILLSMITH_MODEL_DIR: testModelSettings().modelDir,
      SKILLSMITH_ALLOW_REMOTE_MODELS: 'false',
    });
    const services = createServices(config, pool, { logger: pino({ level: 'silent' }) });
    const names = async () => (await services.recall(tenant, { goal: job.fresh })).map((match) => match.name);
    expect(await names()).toEqual([job.name]);
    statements.length = 0;
    expect(await names()).toEqual([job.name]);
    // The kept configuration: no read of the tenant's models before the search statement.
    expect(statements.filter((text) => !text.startsWith('UPDATE'))).toEqual([expect.stringContaining('procedure_goal_vectors')]);
    const unrelated = 'bake a sourdough loaf with rye flour';
    expect(await services.recall(tenant, { goal: unrelated })).toEqual([]);

    // Another process (\`skillsmith reembed\`) moves the tenant to another model: the kept configuration
    // must not answer for the model the tenant left — the explicitly set model is now refused.
    const other = { modelId: 'acme/embed-other', dimension: embedder.dimension };
    await forgetOtherModels(database.pool, tenant, other.modelId);
    await ensureEmbeddingModel(database.pool, tenant, other);
    // First a recall that matches nothing, so no row carries the models: it reads them, and is refused.
    await expect(services.recall(tenant, { goal: unrelated })).rejects.toBeInstanceOf(TenantEmbeddingModelMismatch);
    await expect(names()).rejects.toBeInstanceOf(TenantEmbeddingModelMismatch);
    await services.recallUsage.flush();
  });

  it('records use off the request path: last_used_at is written when the batch flushes', async () => {
    const errors: unknown[] = [];
    const usage = createRecallUsage(database.pool, { delayMs: 60_000, onError: (error) => errors.push(error) });
    const before = await findProcedureByName(database.pool, tenantId, 'deploy-service');
    await recallSkill({ ...deps, usage }, tenantId, { goal: corpus[0].fresh, topK: 1 });
    expect((await findProcedureByName(database.pool, tenantId, 'deploy-service'))!.lastUsedAt).toEqual(before!.lastUsedAt);
    await usage.flush();
    expect((await findProcedureByName(database.pool, tenantId, 'deploy-service'))!.lastUsedAt).not.toBeNull();
    expect(errors).toEqual([]);
  });
});
