import { WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASS_STATUS_ATTRIBUTE, PASS_TENANT_ATTRIBUTE } from '../../src/contracts/search-attributes.ts';
import { freePort } from '../../src/infra/temporal-dev-server.ts';
import { listProcedures, setProcedureEnabled } from '../../src/procedures/procedure-repository.ts';
import { checkAgentSkillsDocument } from '../../src/skills/agentskills-rules.ts';
import { readPackageArchive } from '../../src/skills/package-archive.ts';
import { listPassClusters, listPasses } from '../../src/synthesis/pass-repository.ts';
import type { PassRecord } from '../../src/contracts/pass-record.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { startScriptedLlm, type ScriptedLlm } from '../support/scripted-llm.ts';
import {
  ingest,
  learnedAnswer,
  startSynthesisHarness,
  synthesisTestConfig,
  taskRuns,
  type SynthesisHarness,
} from '../support/synthesis-harness.ts';
import { requireTestModel } from '../support/test-model.ts';
import { until } from '../support/until.ts';

const DEPLOY_TOOLS = ['repo.clone', 'build.run', 'deploy.apply', 'deploy.status'];
const ROTATE_TOOLS = ['secrets.read', 'keys.rotate', 'secrets.write', 'notify.slack'];
const deployGoals = [
  'Deploy the billing service to staging',
  'Please deploy the billing service to the staging environment',
  'Roll out the billing service to staging',
];
const rotateGoals = [
  'Rotate the API key for the payments integration',
  'Please rotate the payments integration API key',
  'Rotate our payments API key and revoke the old one',
];

const deployAnswer = learnedAnswer('deploy-service-to-staging', 'Deploy a service to the staging environment.', DEPLOY_TOOLS);
const rotateAnswer = learnedAnswer(
  'rotate-integration-api-key',
  'Rotate the API key of an integration and revoke the old key.',
  ROTATE_TOOLS,
);

/** Answers by the consensus sequence in the prompt, like a model would. */
const goodModel = (request: { messages: Array<{ content: string }> }) => {
  const prompt = request.messages[1]!.content;
  return { content: prompt.includes('keys.rotate') ? rotateAnswer : deployAnswer };
};

describe('synthesisPass on real Temporal, Postgres and the test embedder, with a scripted LLM', () => {
  let database: TestDatabase;
  let llm: ScriptedLlm;
  let harness: SynthesisHarness;

  beforeAll(async () => {
    await requireTestModel();
    database = await openTestDatabase();
    llm = await startScriptedLlm(goodModel);
    harness = await startSynthesisHarness(database, synthesisTestConfig({ llmBaseUrl: llm.baseUrl, taskQueue: `synthesis-${Date.now()}` }));
  });

  afterAll(async () => {
    await harness?.close();
    await llm?.close();
    await database?.close();
  });

  const recall = (tenantId: string, goal: string) => harness.services.recall(tenantId, { goal });

  it('auto-synthesis fires after 3 successful similar sequences and the skill is recallable', async () => {
    const tenantId = 'kpi-fires';
    llm.setScript(goodModel);
    await ingest(database, taskRuns('deploy', deployGoals, DEPLOY_TOOLS, { tenantId }), tenantId);
    await ingest(database, taskRuns('rotate', rotateGoals, ROTATE_TOOLS, { tenantId }), tenantId);
    await ingest(
      database,
      taskRuns('weather', ['What is the weather in Paris tomorrow?'], ['web.search', 'web.read', 'answer.write'], { tenantId }),
      tenantId,
    );

    const { handle, record } = await harness.runPass({ tenantId });
    expect(handle.workflowId).toMatch(/^synthesis\/kpi-fires\/\d{4}-\d\d-\d\dT/);
    expect(record).toMatchObject({ status: 'completed', outcome: null, distiller: 'llm' });
    expect(record.counts).toMatchObject({ runsSeen: 7, sequences: 7, qualifying: 2, added: 2, updated: 0, noop: 0, skipped: 0 });

    const procedures = await listProcedures(database.pool, tenantId);
    expect(procedures.map((procedure) => procedure.name).sort()).toEqual(['deploy-service-to-staging', 'rotate-integration-api-key']);
    const rotate = procedures.find((procedure) => procedure.name === 'rotate-integration-api-key')!;
    // provenance integrity: exactly the runs it was distilled from, each a real run
    expect(rotate.provenance).toEqual({ source: 'synthesized', from_sessions: ['rotate-1', 'rotate-2', 'rotate-3'] });
    expect(rotate).toMatchObject({ successCount: 3, attemptCount: 3, enabled: true, supersededBy: null, revision: 1 });

    const matches = await recall(tenantId, 'Could you rotate the API key we use for payments?');
    expect(matches[0]).toMatchObject({ name: 'rotate-integration-api-key', revision: 1, toolsRequired: ROTATE_TOOLS });
    expect(matches[0]!.score).toBeGreaterThanOrEqual(harness.config.recall.threshold);
    expect(matches[0]!.body).toContain('## Edge cases');
    expect(llm.requests.every((request) => request.temperature !== undefined && request.temperature <= 0.2)).toBe(true);

    const history = await handle.fetchHistory();
    if (process.env.SKILLSMITH_RECORD_HISTORIES) {
      // Refreshes the replay fixtures after an intended workflow change (test/workflows/replay.test.ts).
      const { recordHistory } = await import('../support/histories.ts');
      await recordHistory('synthesis-pass-recall-space', handle.workflowId, history);
    }
    const scheduled = (history.events ?? []).map((event) => event.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);
    expect(scheduled).toEqual([
      'beginPass',
      'extractRuns',
      'embedGoals',
      'clusterPassRuns',
      'settleUnchangedClusters',
      'selectPassClusters',
      'recordPassCounts',
      'buildRecallSpace',
      'finishPass',
    ]);
    const description = await handle.describe();
    expect(description.memo).toMatchObject({ tenantId, status: 'completed', added: 2, qualifying: 2, pending: 0 });
    // Filterable in the UI: the test dev server registers the pass search attributes, as `up` does.
    expect(description.typedSearchAttributes.get(PASS_TENANT_ATTRIBUTE)).toBe(tenantId);
    expect(description.typedSearchAttributes.get(PASS_STATUS_ATTRIBUTE)).toBe('completed');
    const listed = await until('the pass listed by its search attributes', async () => {
      const ids: string[] = [];
      for await (const execution of harness.client.workflow.list({
        query: `SkillsmithTenant = '${tenantId}' AND SkillsmithPassStatus = 'completed'`,
      }))
        ids.push(execution.workflowId);
      return ids.length > 0 ? ids : undefined;
    });
    expect(listed).toEqual([handle.workflowId]);
    // Each cluster child tells what it is in the UI's Relationships and Timeline tabs.
    const [rotateCluster] = (await listPassClusters(database.pool, tenantId, handle.workflowId)).filter((cluster) =>
      cluster.runIds.includes('rotate-1'),
    );
    const child = await harness.client.workflow.getHandle(`${handle.workflowId}/cluster/${rotateCluster!.clusterKey}`).describe();
    expect(await child.staticSummary()).toMatch(/^3 runs, 3 succeeded \(100%\): "(Rotate|Please rotate)/);
  });

  it('recall precision: nothing below the recall threshold, nothing disabled', async () => {
    const tenantId = 'kpi-fires';
    expect(await recall(tenantId, 'What is the capital of Mongolia?')).toEqual([]);
    const all = await recall(tenantId, 'Rotate the payments API key');
    expect(all.every((match) => match.score >= harness.config.recall.threshold)).toBe(true);
    await setProcedureEnabled(database.pool, tenantId, 'rotate-integration-api-key', false);
    expect((await recall(tenantId, 'Rotate the payments API key')).map((match) => match.name)).not.toContain('rotate-integration-api-key');
    await setProcedureEnabled(database.pool, tenantId, 'rotate-integration-api-key', true);
    expect((await recall(tenantId, 'Rotate the payments API key'))[0]?.name).toBe('rotate-integration-api-key');
  });

  it('every synthesised skill exports as a valid agentskills.io SKILL.md and re-installs to the same sha256', async () => {
    const tenantId = 'kpi-fires';
    const { skills } = harness.services;
    for (const procedure of await listProcedures(database.pool, tenantId)) {
      const revision = await skills.resolve(tenantId, `${procedure.name}@${procedure.revision}`);
      expect(revision).toMatchObject({ source: 'agent', trust: 'external_untrusted' });
      expect(revision.authoredBy).toMatchObject({ principalId: 'skillsmith:synthesis', runId: procedure.provenance.from_sessions[0] });
      const exported = await readPackageArchive(await skills.readArchive(tenantId, revision), procedure.name);
      const document = new TextDecoder().decode(exported.files.get('SKILL.md'));
      expect(checkAgentSkillsDocument(document, procedure.name)).toEqual([]);
      const reinstalled = await skills.install('kpi-export', exported, { source: 'operator' });
      expect(reinstalled.contentSha256).toBe(revision.contentSha256);
    }
  });

  it('reconcile never deletes: the same runs again are NOOPs, new runs UPDATE the same skill', async () => {
    const tenantId = 'kpi-fires';
    const before = await listProcedures(database.pool, tenantId);
    const again = await harness.runPass({ tenantId, full: true });
    expect(again.record.counts).toMatchObject({ qualifying: 2, added: 0, updated: 0, noop: 2, superseded: 0 });

    await ingest(
      database,
      taskRuns(
        'deploy-more',
        [
          'Deploy the ledger service to staging',
          'Please roll out the ledger service to staging',
          'Deploy ledger to the staging environment',
        ],
        DEPLOY_TOOLS,
        { tenantId, startAt: 30 },
      ),
      tenantId,
    );
    const update = await harness.runPass({ tenantId });
    expect(update.record.counts).toMatchObject({ runsSeen: 3, qualifying: 1, updated: 1, added: 0 });
    const after = await listProcedures(database.pool, tenantId);
    expect(after.map((procedure) => procedure.id).sort()).toEqual(before.map((procedure) => procedure.id).sort());
    const deploy = after.find((procedure) => procedure.name === 'deploy-service-to-staging')!;
    expect(deploy).toMatchObject({ revision: 2, successCount: 6, attemptCount: 6 });
    expect(deploy.provenance.from_sessions).toHaveLength(6);
  });

  it('two similar runs are not enough: the cluster does not qualify and says why', async () => {
    const tenantId = 'too-few';
    await ingest(database, taskRuns('deploy', deployGoals.slice(0, 2), DEPLOY_TOOLS, { tenantId }), tenantId);
    const { handle, record } = await harness.runPass({ tenantId });
    expect(record.counts).toMatchObject({ qualifying: 0, added: 0 });
    const clusters = await listPassClusters(database.pool, tenantId, handle.workflowId);
    expect(clusters).toHaveLength(1);
    expect(clusters[0]).toMatchObject({ qualifying: false, size: 2 });
    expect(clusters[0]!.reason).toMatch(/2 successful runs.*3/);
    expect(await listProcedures(database.pool, tenantId)).toEqual([]);
  });

  it('LLM unreachable: the pass stops, records "skipped: llm unavailable", logs an error, installs nothing, and never falls back', async () => {
    const tenantId = 'llm-down';
    await ingest(database, taskRuns('deploy', deployGoals, DEPLOY_TOOLS, { tenantId }), tenantId);
    await ingest(database, taskRuns('rotate', rotateGoals, ROTATE_TOOLS, { tenantId }), tenantId);
    const closed = await startSynthesisHarness(
      database,
      synthesisTestConfig({ llmBaseUrl: `http://127.0.0.1:${await freePort()}/v1`, taskQueue: `llm-down-${Date.now()}` }),
    );
    try {
      const { handle, record } = await closed.runPass({ tenantId });
      expect(record.status).toBe('skipped');
      expect(record.outcome).toMatch(/^skipped: llm unavailable \(.*unreachable/);
      expect(record.counts).toMatchObject({ qualifying: 2, added: 0, updated: 0 });
      expect(await listProcedures(database.pool, tenantId)).toEqual([]);
      const errors = closed.logLines.map((line) => JSON.parse(line)).filter((line) => line.level === 50);
      expect(errors.some((line) => /llm unavailable/.test(line.msg))).toBe(true);
      // the pass stopped at the first cluster: the second was never distilled
      const clusters = await listPassClusters(database.pool, tenantId, handle.workflowId);
      expect(clusters.filter((cluster) => cluster.status === 'distilled' || cluster.status === 'installed')).toEqual([]);
    } finally {
      await closed.close();
    }
  });

  it('malformed LLM output skips that cluster with the reason; SKIP skips it too; the pass goes on', async () => {
    const tenantId = 'malformed';
    await ingest(database, taskRuns('deploy', deployGoals, DEPLOY_TOOLS, { tenantId }), tenantId);
    await ingest(database, taskRuns('rotate', rotateGoals, ROTATE_TOOLS, { tenantId }), tenantId);
    llm.setScript((request) =>
      request.messages[1]!.content.includes('keys.rotate')
        ? { content: 'Here is a great skill: always rotate keys carefully.' }
        : { content: deployAnswer },
    );
    const { handle, record } = await harness.runPass({ tenantId });
    expect(record).toMatchObject({ status: 'completed' });
    expect(record.counts).toMatchObject({ qualifying: 2, added: 1, skipped: 1 });
    const skipped = (await listPassClusters(database.pool, tenantId, handle.workflowId)).find((cluster) => cluster.status === 'skipped')!;
    expect(skipped.skipReason).toMatch(/^malformed llm output: output is neither SKIP nor a document/);

    // An answer that tells the agent to call a tool no run of the cluster used is refused the same way.
    const tenantInvents = 'invents-a-tool';
    await ingest(database, taskRuns('rotate', rotateGoals, ROTATE_TOOLS, { tenantId: tenantInvents }), tenantInvents);
    llm.setScript(() => ({
      content: learnedAnswer('rotate-integration-api-key', 'Rotate an API key.', [...ROTATE_TOOLS, 'vault.unseal']),
    }));
    const invents = await harness.runPass({ tenantId: tenantInvents });
    expect(invents.record.counts).toMatchObject({ qualifying: 1, skipped: 1, added: 0 });
    const [refused] = await listPassClusters(database.pool, tenantInvents, invents.handle.workflowId);
    expect(refused!.skipReason).toBe("malformed llm output: names tools the cluster's runs never used: vault.unseal");
    expect(await listProcedures(database.pool, tenantInvents)).toEqual([]);

    llm.setScript(() => ({ content: 'SKIP' }));
    const tenantSkip = 'answers-skip';
    await ingest(database, taskRuns('rotate', rotateGoals, ROTATE_TOOLS, { tenantId: tenantSkip }), tenantSkip);
    const skip = await harness.runPass({ tenantId: tenantSkip });
    expect(skip.record.counts).toMatchObject({ qualifying: 1, skipped: 1, added: 0 });
    const [cluster] = await listPassClusters(database.pool, tenantSkip, skip.handle.workflowId);
    expect(cluster!.skipReason).toBe('llm distiller answered SKIP');
    llm.setScript(goodModel);
  });

  it('embedder failure: the pass fails after its retries with the cause visible, and is recorded as failed', async () => {
    const tenantId = 'no-model';
    await ingest(database, taskRuns('deploy', deployGoals, DEPLOY_TOOLS, { tenantId }), tenantId);
    const config = synthesisTestConfig({ llmBaseUrl: llm.baseUrl, taskQueue: `no-model-${Date.now()}` });
    const broken = await startSynthesisHarness(database, {
      ...config,
      embedding: { ...config.embedding, modelDir: '/nonexistent/models' },
    });
    try {
      const handle = await broken.startPass({ tenantId });
      const failure = await handle.result().catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(WorkflowFailedError);
      const cause = (failure as WorkflowFailedError).cause as { cause?: { type?: string; message?: string } };
      expect(cause.cause?.type).toBe('EmbeddingModelUnavailable');
      expect(cause.cause?.message).toMatch(/\/nonexistent\/models/);
      const [pass] = await listPasses(database.pool, tenantId, 1);
      expect(pass).toMatchObject({ status: 'failed' });
      expect(pass!.outcome).toMatch(/^failed: /);
      expect(await listProcedures(database.pool, tenantId)).toEqual([]);
    } finally {
      await broken.close();
    }
  });

  it('synthesis disabled: the pass is skipped and logged at info level; recall still works', async () => {
    const config = synthesisTestConfig({ llmBaseUrl: llm.baseUrl, taskQueue: `disabled-${Date.now()}` });
    const disabled = await startSynthesisHarness(database, { ...config, synthesis: { ...config.synthesis, enabled: false } });
    try {
      const { record } = await disabled.runPass({ tenantId: 'kpi-fires' });
      expect(record).toMatchObject({ status: 'skipped', outcome: 'skipped: synthesis disabled' });
      const infos = disabled.logLines.map((line) => JSON.parse(line)).filter((line) => line.level === 30);
      expect(infos.some((line) => /synthesis is disabled/.test(line.msg))).toBe(true);
      expect((await recall('kpi-fires', 'Rotate the payments API key'))[0]?.name).toBe('rotate-integration-api-key');
    } finally {
      await disabled.close();
    }
  });

  it('the LLM budget caps distil calls per pass; the pass starts its own continuation, which drains the rest', async () => {
    const tenantId = 'continued';
    llm.setScript(goodModel);
    await ingest(database, taskRuns('deploy', deployGoals, DEPLOY_TOOLS, { tenantId }), tenantId);
    await ingest(database, taskRuns('rotate', rotateGoals, ROTATE_TOOLS, { tenantId, startAt: 10 }), tenantId);
    const config = synthesisTestConfig({
      llmBaseUrl: llm.baseUrl,
      taskQueue: `continued-${Date.now()}`,
      synthesis: { maxClustersPerPass: 1, continuationDelaySeconds: 2 },
    });
    const budgeted = await startSynthesisHarness(database, config);
    try {
      const before = llm.requests.length;
      const { handle, record } = await budgeted.runPass({ tenantId });
      expect(record.counts).toMatchObject({ qualifying: 2, added: 1, pending: 1 });
      expect(llm.requests.length - before).toBe(1);
      // Named for when it begins, and said on the pass's record (`passes show`) and in its memo.
      const continuationId = /^continued by (synthesis\/continued\/\S+): 1 clusters pending past the LLM budget/.exec(
        record.outcome ?? '',
      )?.[1];
      expect(continuationId).toBeDefined();
      expect(Date.parse(continuationId!.split('/')[2]!) - Date.parse(record.startedAt)).toBeGreaterThanOrEqual(2_000);
      expect((await handle.describe()).memo).toMatchObject({ continuedBy: continuationId });

      const continuation = budgeted.client.workflow.getHandle(continuationId!);
      const continued = (await continuation.result()) as PassRecord;
      // Its memo, kept from its first task on (read after it ends: a loaded worker may not have run that task yet).
      expect((await continuation.describe()).memo).toMatchObject({ continues: handle.workflowId, startDelaySeconds: 2 });
      expect(continued).toMatchObject({ status: 'completed', outcome: null });
      expect(continued.counts).toMatchObject({ carried: 1, added: 1, pending: 0 });
      expect(llm.requests.length - before).toBe(2);
      expect((await listProcedures(database.pool, tenantId)).map((procedure) => procedure.name).sort()).toEqual([
        'deploy-service-to-staging',
        'rotate-integration-api-key',
      ]);
      if (process.env.SKILLSMITH_RECORD_HISTORIES) {
        const { recordHistory } = await import('../support/histories.ts');
        await recordHistory('synthesis-pass-continued', handle.workflowId, await handle.fetchHistory());
        await recordHistory('synthesis-pass-continuation', continuationId!, await continuation.fetchHistory());
      }
    } finally {
      await budgeted.close();
    }
  });

  it('cancelling a pass during distillation records it as cancelled and installs nothing', async () => {
    const tenantId = 'cancelled';
    await ingest(database, taskRuns('rotate', rotateGoals, ROTATE_TOOLS, { tenantId }), tenantId);
    llm.setScript(() => ({ content: rotateAnswer, delayMs: 8_000 }));
    const before = llm.requests.length;
    const handle = await harness.startPass({ tenantId });
    // Cancel while the distill call is in flight.
    await until('the distill call to be in flight', async () => (llm.requests.length > before ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 100,
    });
    await handle.cancel();
    await expect(handle.result()).rejects.toThrow(WorkflowFailedError);
    const [pass] = await listPasses(database.pool, tenantId, 1);
    expect(pass).toMatchObject({ status: 'cancelled', outcome: 'cancelled' });
    await new Promise((resolve) => setTimeout(resolve, 9_000));
    expect(await listProcedures(database.pool, tenantId)).toEqual([]);
    llm.setScript(goodModel);
  });
});
