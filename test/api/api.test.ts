import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertProcedure } from '../../src/procedures/procedure-repository.ts';
import { buildApiServer, startApiServer } from '../../src/api/server.ts';
import { EmbeddingModelUnavailable } from '../../src/embedding/embedding-errors.ts';
import { countSessions } from '../../src/sessions/session-repository.ts';
import { withTransaction } from '../../src/store/database.ts';
import { listSkillEvents } from '../../src/store/skill-event-repository.ts';
import { skillPackage } from '../skills/skill-fixtures.ts';
import { ALL_SCOPES, bearer, openApiHarness, token, type ApiHarness } from './api-harness.ts';

const full = token('acme', ALL_SCOPES);
const readOnly = token('acme', ['session.read'], 'reader');
const writeOnly = token('acme', ['session.write'], 'writer');
const recallOnly = token('acme', ['recall.read'], 'planner');
const other = token('globex', ALL_SCOPES);

let harness: ApiHarness;
let sessionId: string;

beforeAll(async () => {
  harness = await openApiHarness([full, readOnly, writeOnly, recallOnly, other], { withRecall: true });
  const { skills, services } = harness;
  await skills.install(
    'acme',
    skillPackage(
      { name: 'deploy-service', description: 'Deploy a service to production.' },
      { extraFiles: { 'references/checklist.md': 'Check the dashboards.' } },
    ),
    { source: 'operator' },
  );
  await skills.install(
    'acme',
    skillPackage({ name: 'triage-incident', description: 'Triage a production incident.', requiredTools: ['pager.ack'] }),
    { source: 'operator' },
  );
  await services.agentSpecs.set('acme', 'ops-bot', ['deploy-service', 'triage-incident']);
});

afterAll(async () => {
  await harness?.close();
});

const inject = (options: InjectOptions) => harness.app.inject(options);

describe('HTTP API: refusals before anything is written', () => {
  it('answers /healthz without a token and serves an OpenAPI document built from the route schemas', async () => {
    const health = await inject({ method: 'GET', url: '/healthz' });
    expect(health.statusCode).toBe(200);
    expect(health.json()).toEqual({ status: 'ok', database: 'ok' });
    const document = (await inject({ method: 'GET', url: '/openapi.json' })).json<{
      openapi: string;
      paths: Record<string, Record<string, { requestBody?: unknown; security?: unknown }>>;
    }>();
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.paths).sort()).toEqual([
      '/healthz',
      '/metrics',
      '/readyz',
      '/v1/approvals',
      '/v1/approvals/{id}/resolve',
      '/v1/recall',
      '/v1/rollout/check',
      '/v1/rollout/evidence',
      '/v1/runs',
      '/v1/sessions',
      '/v1/sessions/{id}',
      '/v1/sessions/{id}/replay',
      '/v1/sessions/{id}/skills/load',
      '/v1/skills',
      '/v1/skills/manage',
    ]);
    expect(JSON.stringify(document.paths['/v1/sessions']!.post!.requestBody)).toContain('mcpPrompts');
    expect(document.paths['/v1/sessions']!.post!.security).toEqual([{ bearer: [] }]);
    expect(document.paths['/metrics']!.get!.security).toEqual([{ bearer: [] }]);
  });

  it.each([
    ['no Authorization header', {}],
    ['an unknown token', { authorization: 'Bearer not-a-known-token-at-all' }],
    ['a malformed header', { authorization: `Basic ${full.token}` }],
  ])('refuses %s with 401 and writes nothing', async (_what, headers) => {
    const before = await countSessions(harness.database.pool, 'acme');
    const response = await inject({ method: 'POST', url: '/v1/sessions', headers, payload: { agentId: 'ops-bot', tools: [] } });
    expect(response.statusCode).toBe(401);
    expect(response.json().error.code).toBe('Unauthorized');
    expect(response.headers['www-authenticate']).toBe('Bearer');
    expect(await countSessions(harness.database.pool, 'acme')).toBe(before);
  });

  it('refuses a token without the exact scope with 403 (session.read does not grant session.write)', async () => {
    const before = await countSessions(harness.database.pool, 'acme');
    const response = await inject({
      method: 'POST',
      url: '/v1/sessions',
      headers: bearer(readOnly),
      payload: { agentId: 'ops-bot', tools: [] },
    });
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({
      error: { code: 'ScopeMissing', message: 'this token lacks the scope "session.write"', details: { scope: 'session.write' } },
    });
    expect((await inject({ method: 'GET', url: '/v1/skills', headers: bearer(writeOnly) })).statusCode).toBe(403);
    expect(await countSessions(harness.database.pool, 'acme')).toBe(before);
  });

  it('refuses malformed JSON, unknown fields, wrong types and oversized bodies, writing nothing', async () => {
    const before = await countSessions(harness.database.pool, 'acme');
    const headers = { ...bearer(full), 'content-type': 'application/json' };
    const malformed = await inject({ method: 'POST', url: '/v1/sessions', headers, payload: '{"agentId": "ops-bot",' });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().error.code).toBe('MalformedJson');
    const unknownField = await inject({
      method: 'POST',
      url: '/v1/sessions',
      headers: bearer(full),
      payload: { agentId: 'ops-bot', tools: [], tenantId: 'globex' },
    });
    expect(unknownField.statusCode).toBe(400);
    expect(unknownField.json().error).toMatchObject({ code: 'ValidationFailed', details: { in: 'body' } });
    expect(unknownField.json().error.message).toContain('tenantId');
    const wrongType = await inject({
      method: 'POST',
      url: '/v1/sessions',
      headers: bearer(full),
      payload: { agentId: 'ops-bot', tools: 'all' },
    });
    expect(wrongType.statusCode).toBe(400);
    const oversized = await inject({
      method: 'POST',
      url: '/v1/sessions',
      headers: bearer(full),
      payload: { agentId: 'ops-bot', tools: [], mcpPrompts: [{ server: 's', name: 'n', description: 'd', text: 'x'.repeat(70_000) }] },
    });
    expect(oversized.statusCode).toBe(413);
    expect(oversized.json().error.code).toBe('PayloadTooLarge');
    const wrongMedia = await inject({
      method: 'POST',
      url: '/v1/sessions',
      headers: { ...bearer(full), 'content-type': 'text/plain' },
      payload: 'hello',
    });
    expect(wrongMedia.statusCode).toBe(415);
    expect(await countSessions(harness.database.pool, 'acme')).toBe(before);
    expect((await listSkillEvents(harness.database.pool, 'acme', { kind: 'session.created' })).length).toBe(before);
  });

  it('answers unknown routes and bad ids with JSON errors', async () => {
    const missing = await inject({ method: 'GET', url: '/v1/nothing', headers: bearer(full) });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe('RouteNotFound');
    const badId = await inject({ method: 'GET', url: '/v1/sessions/not-a-uuid', headers: bearer(full) });
    expect(badId.statusCode).toBe(400);
    const absent = await inject({ method: 'GET', url: '/v1/sessions/00000000-0000-4000-8000-000000000000', headers: bearer(full) });
    expect(absent.statusCode).toBe(404);
    expect(absent.json().error.code).toBe('SessionNotFound');
  });
});

describe('HTTP API: sessions', () => {
  it('opens a session with pins and a pinned catalog; the tenant comes from the token', async () => {
    const response = await inject({
      method: 'POST',
      url: '/v1/sessions',
      headers: bearer(full),
      payload: {
        agentId: 'ops-bot',
        tools: ['workspace.read_text'],
        mcpPrompts: [
          { server: 'wiki', name: 'lookup', description: 'Look something up in the wiki.', text: 'Search the wiki for {term}.' },
        ],
      },
    });
    expect(response.statusCode).toBe(201);
    const session = response.json();
    sessionId = session.id;
    expect(session.pins.map((pin: { name: string; revision: number }) => `${pin.name}@${pin.revision}`)).toEqual([
      'deploy-service@1',
      'triage-incident@1',
      'wiki/lookup@0',
    ]);
    expect(session.catalog).toContain('- name: deploy-service');
    expect(session.catalog).not.toContain('1. Read.');
    expect(session.mcpPrompts[0]).not.toHaveProperty('text');
    const fetched = await inject({ method: 'GET', url: `/v1/sessions/${sessionId}`, headers: bearer(readOnly) });
    expect(fetched.statusCode).toBe(200);
    expect(fetched.json()).toEqual(session);
  });

  it('fails an open for an agent with no spec (404) and quotes unresolvable refs (422)', async () => {
    const none = await inject({ method: 'POST', url: '/v1/sessions', headers: bearer(full), payload: { agentId: 'nobody', tools: [] } });
    expect(none.statusCode).toBe(404);
    expect(none.json().error.code).toBe('AgentSpecNotFound');
    await harness.services.agentSpecs.set('acme', 'fragile', ['deploy-service']);
    await harness.skills.archive('acme', 'deploy-service', 1);
    const broken = await inject({ method: 'POST', url: '/v1/sessions', headers: bearer(full), payload: { agentId: 'fragile', tools: [] } });
    expect(broken.statusCode).toBe(422);
    expect(broken.json().error).toMatchObject({
      code: 'SkillRefsUnresolved',
      details: { refs: [expect.objectContaining({ ref: 'deploy-service' })] },
    });
    await harness.skills.install('acme', skillPackage({ name: 'deploy-service', description: 'Deploy a service to production.' }), {
      source: 'operator',
    });
  });

  it('skill.load: bodies, members, missing tools, the cap, unload and the catalog listing', async () => {
    const url = `/v1/sessions/${sessionId}/skills/load`;
    const body = await inject({ method: 'POST', url, headers: bearer(writeOnly), payload: { name: 'triage-incident' } });
    expect(body.statusCode).toBe(200);
    expect(body.json()).toMatchObject({
      revision: 1,
      trust: 'trusted_configuration',
      missingTools: ['pager.ack'],
      path: null,
      alreadyLoaded: false,
    });
    const member = await inject({
      method: 'POST',
      url,
      headers: bearer(full),
      payload: { name: 'deploy-service', path: 'references/checklist.md' },
    });
    expect(member.json()).toMatchObject({ content: 'Check the dashboards.', revision: 1 });
    const third = await inject({ method: 'POST', url, headers: bearer(full), payload: { name: 'wiki/lookup' } });
    expect(third.statusCode).toBe(409);
    expect(third.json().error).toMatchObject({
      code: 'SkillBodyCapReached',
      details: { loaded: ['triage-incident', 'deploy-service:references/checklist.md'] },
    });
    const unload = await inject({ method: 'POST', url, headers: bearer(full), payload: { name: 'triage-incident', unload: true } });
    expect(unload.json()).toMatchObject({ name: 'triage-incident', unloaded: [expect.objectContaining({ name: 'triage-incident' })] });
    const mcp = await inject({ method: 'POST', url, headers: bearer(full), payload: { name: 'wiki/lookup' } });
    expect(mcp.json()).toMatchObject({ content: 'Search the wiki for {term}.', revision: 0, trust: 'external_untrusted' });
    const unknown = await inject({ method: 'POST', url, headers: bearer(full), payload: { name: 'not-there' } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error).toMatchObject({
      code: 'SkillNotInCatalog',
      details: { catalog: ['deploy-service', 'triage-incident', 'wiki/lookup'] },
    });
    const traversal = await inject({
      method: 'POST',
      url,
      headers: bearer(full),
      payload: { name: 'deploy-service', path: '../../../etc/passwd' },
    });
    expect(traversal.statusCode).toBe(400);
    expect(traversal.json().error.code).toBe('SkillPackagePathEscape');
  });

  it('replay resolves pins and answers 409 naming the pin when the archive changed', async () => {
    const ok = await inject({ method: 'POST', url: `/v1/sessions/${sessionId}/replay`, headers: bearer(full) });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().pins.map((pin: { name: string }) => pin.name)).toEqual(['deploy-service', 'triage-incident', 'wiki/lookup']);
    await harness.database.pool.query(
      `UPDATE skill_packages SET bytes = bytes || '\\x01'::bytea WHERE tenant_id = 'acme' AND key IN
         (SELECT package_key FROM skill_revisions WHERE tenant_id = 'acme' AND name = 'triage-incident' AND revision = 1)`,
    );
    const mismatch = await inject({ method: 'POST', url: `/v1/sessions/${sessionId}/replay`, headers: bearer(full), payload: {} });
    expect(mismatch.statusCode).toBe(409);
    expect(mismatch.json().error).toMatchObject({ code: 'SkillPinMismatch', details: { pin: { name: 'triage-incident', revision: 1 } } });
    expect(mismatch.json().error.message).toContain('triage-incident@1');
  });

  it('another tenant sees none of it', async () => {
    expect((await inject({ method: 'GET', url: `/v1/sessions/${sessionId}`, headers: bearer(other) })).statusCode).toBe(404);
    const load = await inject({
      method: 'POST',
      url: `/v1/sessions/${sessionId}/skills/load`,
      headers: bearer(other),
      payload: { name: 'deploy-service' },
    });
    expect(load.statusCode).toBe(404);
    expect((await inject({ method: 'GET', url: '/v1/skills', headers: bearer(other) })).json()).toEqual({ skills: [] });
  });
});

describe('HTTP API: skills and recall', () => {
  it("lists the tenant's active skills, metadata only", async () => {
    const response = await inject({ method: 'GET', url: '/v1/skills?limit=10', headers: bearer(full) });
    expect(response.statusCode).toBe(200);
    const names = response.json().skills.map((skill: { name: string; revision: number }) => `${skill.name}@${skill.revision}`);
    expect(names).toEqual(['deploy-service@2', 'triage-incident@1']);
    expect(JSON.stringify(response.json())).not.toContain('1. Read.');
    expect((await inject({ method: 'GET', url: '/v1/skills?limit=0', headers: bearer(full) })).statusCode).toBe(400);
  });

  it("recalls through the real embedder, for the token's tenant only", async () => {
    const embedder = await harness.services.embedder('acme');
    const revision = await harness.skills.resolve('acme', 'deploy-service');
    const whenToUse = 'deploy a web service to the production cluster';
    const [vector] = await embedder.embed([whenToUse], 'document');
    await withTransaction(harness.database.pool, (client) =>
      insertProcedure(client, 'acme', {
        skillId: revision.skillId,
        name: revision.name,
        revision: revision.revision,
        whenToUse,
        toolSequence: [{ tool: 'deploy.run', argumentNames: ['service'] }],
        toolsRequired: ['deploy.run'],
        successCount: 5,
        attemptCount: 5,
        fromSessions: ['s1'],
        embedding: vector!,
        embeddingModel: embedder.modelId,
      }),
    );
    const response = await inject({
      method: 'GET',
      url: `/v1/recall?goal=${encodeURIComponent('deploy the web service to production')}&topK=2`,
      headers: bearer(recallOnly),
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().skills).toEqual([
      expect.objectContaining({ name: 'deploy-service', revision: 2, toolsRequired: ['deploy.run'] }),
    ]);
    expect(response.json().skills[0].score).toBeGreaterThan(0.5);
    const elsewhere = await inject({
      method: 'GET',
      url: `/v1/recall?goal=${encodeURIComponent('deploy the web service to production')}`,
      headers: bearer(other),
    });
    expect(elsewhere.json()).toEqual({ skills: [] });
    expect((await inject({ method: 'GET', url: '/v1/recall?goal=', headers: bearer(full) })).statusCode).toBe(400);
    expect((await inject({ method: 'GET', url: '/v1/recall?goal=x&topK=99', headers: bearer(full) })).statusCode).toBe(400);
    expect((await inject({ method: 'GET', url: '/v1/recall?goal=x&tenant=globex', headers: bearer(full) })).statusCode).toBe(400);
  });

  it('answers 503 when the embedding model cannot be loaded and 500 without detail on an unexpected failure', async () => {
    const failing = async (error: Error) =>
      buildApiServer({
        ...harness.services,
        tokens: [full],
        recall: async () => {
          throw error;
        },
      });
    const unavailable = await failing(new EmbeddingModelUnavailable('nomic-ai/nomic-embed-text-v1.5', ['/models'], 'no onnx/model.onnx'));
    try {
      const response = await unavailable.inject({ method: 'GET', url: '/v1/recall?goal=anything', headers: bearer(full) });
      expect(response.statusCode).toBe(503);
      expect(response.json().error.code).toBe('EmbeddingModelUnavailable');
    } finally {
      await unavailable.close();
    }
    const broken = await failing(new Error('secret connection string postgres://user:pw@db'));
    try {
      const response = await broken.inject({ method: 'GET', url: '/v1/recall?goal=anything', headers: bearer(full) });
      expect(response.statusCode).toBe(500);
      expect(response.json()).toEqual({ error: { code: 'InternalError', message: 'internal error', details: {} } });
    } finally {
      await broken.close();
    }
  });

  it('serves the same routes over a real socket on 127.0.0.1', async () => {
    const running = await startApiServer({ ...harness.services, tokens: [full] }, { host: '127.0.0.1', port: 0 });
    try {
      expect(running.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect((await fetch(`${running.url}/healthz`)).status).toBe(200);
      const unauthorized = await fetch(`${running.url}/v1/skills`);
      expect(unauthorized.status).toBe(401);
      expect(await unauthorized.json()).toMatchObject({ error: { code: 'Unauthorized' } });
      const opened = await fetch(`${running.url}/v1/sessions`, {
        method: 'POST',
        headers: { ...bearer(full), 'content-type': 'application/json' },
        body: JSON.stringify({ agentId: 'ops-bot', tools: [] }),
      });
      expect(opened.status).toBe(201);
      const { id } = (await opened.json()) as { id: string };
      const loaded = await fetch(`${running.url}/v1/sessions/${id}/skills/load`, {
        method: 'POST',
        headers: { ...bearer(full), 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'deploy-service' }),
      });
      expect(loaded.status).toBe(200);
      expect(((await loaded.json()) as { revision: number }).revision).toBe(2);
      const recalled = await fetch(`${running.url}/v1/recall?goal=${encodeURIComponent('ship the service to prod')}`, {
        headers: bearer(full),
      });
      expect(recalled.status).toBe(200);
      const oversized = await fetch(`${running.url}/v1/sessions`, {
        method: 'POST',
        headers: { ...bearer(full), 'content-type': 'application/json' },
        body: JSON.stringify({ agentId: 'ops-bot', tools: [], pad: 'x'.repeat(100_000) }),
      });
      expect(oversized.status).toBe(413);
    } finally {
      await running.close();
    }
  });
});
