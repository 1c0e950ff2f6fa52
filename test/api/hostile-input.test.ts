import fc from 'fast-check';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseRunReport } from '../../src/runs/run-report.ts';
import { listSkillEvents } from '../../src/store/skill-event-repository.ts';
import { activateTenants } from '../support/rollout.ts';
import { skillPackage } from '../skills/skill-fixtures.ts';
import { bearer, openApiHarness, token, type ApiHarness } from './api-harness.ts';

/**
 * Hostile input at every route: generated strings holding a NUL or a lone surrogate, and values
 * nested thousands deep, put in place of each field of a valid request. Every one must be a 4xx
 * that names the field, and no row of any table may change.
 */
const everyScope = token('acme', [
  'session.write',
  'session.read',
  'skill.read',
  'recall.read',
  'run.write',
  'skill.write',
  'approval.read',
  'approval.resolve',
]);
const otherTenant = token('globex', ['session.write']);
const operatorRuntime = { ...token('acme', ['skill.write'], 'operator-runtime'), maxOriginTrust: 'operator' as const };

const skillMd = (name: string) =>
  `---\nname: ${name}\ndescription: Rotate an integration's API key.\nlicense: Apache-2.0\nmetadata:\n  version: 1.0.0\n---\n\n1. Rotate the key.\n`;

const mcpPrompt = { server: 'docs', name: 'howto', description: 'How to write a runbook.', text: 'Write it down.' };

const runReport = {
  agentId: 'agent-1',
  runId: 'run-hostile',
  sessionId: 'session-1',
  goal: 'Rotate the payments API key',
  status: 'completed',
  startedAt: '2026-11-01T10:00:00Z',
  completedAt: '2026-11-01T10:01:00Z',
  skillPins: [{ name: 'deploy-service', revision: 1, contentSha256: 'a'.repeat(64) }],
  toolCalls: [{ tool: 'keys.rotate', args: { key: 'payments' }, resultSummary: 'rotated', success: true, error: 'none' }],
};

/** A skill_manage call in `sessionId`, a session of the caller's tenant (another tenant's is refused). */
const manageBody = (name: string, invocationId: string, sessionId: string) => ({
  invocationId,
  runId: 'run-1',
  originTrust: 'user',
  taint: 'read a ticket',
  sessionId,
  request: { operation: 'create', name, package: { files: { 'SKILL.md': skillMd(name), 'references/notes.md': 'Notes.' } } },
});

/** Every path to a string, number or boolean leaf of a JSON value. */
function leafPaths(value: unknown, path: Array<string | number> = []): Array<Array<string | number>> {
  if (Array.isArray(value)) return value.flatMap((item, index) => leafPaths(item, [...path, index]));
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([key, item]) => leafPaths(item, [...path, key]));
  return [path];
}

const PLACEHOLDER = '\u2063hostile\u2063';

/** The request as JSON text with the leaf at `path` replaced by `hostileJson` (raw: it may be too deep to stringify). */
function withHostile(template: unknown, path: Array<string | number>, hostileJson: string): string {
  const copy = structuredClone(template) as Record<string | number, unknown>;
  let node = copy;
  for (const segment of path.slice(0, -1)) node = node[segment] as Record<string | number, unknown>;
  node[path.at(-1)!] = PLACEHOLDER;
  // A function, not a string: a hostile value holding `$\`` or `$&` must not be read as a replacement pattern.
  return JSON.stringify(copy).replace(JSON.stringify(PLACEHOLDER), () => hostileJson);
}

/** The field an error must name: the last named segment of the path (an array index names its array). */
const fieldOf = (path: Array<string | number>): string => String(path.findLast((segment) => typeof segment === 'string'));

const safeText = fc.string({ maxLength: 12 });
/** A string Postgres cannot store, as JSON text: a NUL or an unpaired surrogate among ordinary characters. */
const unstorableString = fc
  .tuple(safeText, fc.constantFrom('\u0000', '\ud800', '\udbff', '\udc00', '\udfff'), safeText)
  .map((parts) => JSON.stringify(parts.join('')));
/** An object or array nested far deeper than any route allows, as JSON text (JSON.stringify would overflow on it). */
const deepValue = fc
  .tuple(fc.integer({ min: 150, max: 10_000 }), fc.boolean())
  .map(([depth, asArray]) => (asArray ? `${'['.repeat(depth)}1${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`));
const hostileJson = fc.oneof(unstorableString, deepValue);
/**
 * A NUL in the path or the query string; in the path also percent-escapes that decode to no
 * Unicode at all (the query string's parser keeps those as text, which is storable).
 */
const hostileUrlPart = (escapes: string[]) =>
  fc
    .tuple(safeText, fc.constantFrom(...escapes), safeText)
    .map(([before, hostile, after]) => `${encodeURIComponent(before)}${hostile}${encodeURIComponent(after)}`);
const NUL_ESCAPES = ['%00'];
const PATH_ESCAPES = ['%00', '%ED%A0%80', '%FF', '%C0%80'];

/** A digest of every row of every table: equal before and after means nothing was written. */
async function databaseFingerprint(pool: pg.Pool): Promise<string> {
  const { rows: tables } = await pool.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1`,
  );
  const digests = tables.map(
    ({ name }) => `SELECT '${name}' AS name, md5(coalesce(string_agg(row_text, '|' ORDER BY row_text), '')) AS digest
                   FROM (SELECT t::text AS row_text FROM "${name}" t) rows_of_table`,
  );
  const { rows } = await pool.query<{ name: string; digest: string }>(digests.join(' UNION ALL '));
  return rows.map((row) => `${row.name}:${row.digest}`).join(',');
}

describe('hostile input at every route: a 4xx naming the field, and no row changed', () => {
  let harness: ApiHarness;
  let sessionId: string;

  beforeAll(async () => {
    // With Temporal, so a report reaches validation (an accepted one would answer 202 on a queue no worker polls).
    harness = await openApiHarness([everyScope, operatorRuntime, otherTenant], {
      env: { SKILLSMITH_AUTHORING_ENABLED: 'true', SKILLSMITH_API_BODY_LIMIT: '1048576', TEMPORAL_TASK_QUEUE: `hostile-${Date.now()}` },
      temporalAddress: inject('temporalAddress'),
    });
    await harness.skills.install('acme', skillPackage({ name: 'deploy-service', description: 'Deploy a service.' }), {
      source: 'operator',
    });
    await harness.services.agentSpecs.set('acme', 'ops-bot', ['deploy-service']);
    await activateTenants(harness.services.rollout, ['acme']);
    const opened = await harness.app.inject({
      method: 'POST',
      url: '/v1/sessions',
      headers: bearer(everyScope),
      payload: { agentId: 'ops-bot', tools: ['keys.rotate'], mcpPrompts: [mcpPrompt] },
    });
    expect(opened.statusCode).toBe(201);
    sessionId = opened.json<{ id: string }>().id;
  });
  afterAll(async () => {
    await harness?.close();
  });

  const send = (method: 'GET' | 'POST', url: string, payload?: string) =>
    harness.app.inject({
      method,
      url,
      headers: { ...bearer(everyScope), ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(payload === undefined ? {} : { payload }),
    });

  /** Each template is valid as it stands (checked below), so a refusal is the hostile value's doing. */
  const bodyRoutes = () => [
    { url: '/v1/sessions', template: { agentId: 'ops-bot', agentSpecVersion: 1, tools: ['keys.rotate'], mcpPrompts: [mcpPrompt] } },
    { url: `/v1/sessions/${sessionId}/skills/load`, template: { name: 'deploy-service', path: 'SKILL.md', unload: false } },
    { url: `/v1/sessions/${sessionId}/replay`, template: { mcpPrompts: [mcpPrompt] } },
    { url: '/v1/skills/manage', template: manageBody('fresh-skill', 'inv-hostile', sessionId) },
    { url: '/v1/runs', template: runReport },
    { url: '/v1/approvals/00000000-0000-0000-0000-000000000000/resolve', template: { decision: 'reject', reason: 'not now' } },
  ];

  it('the templates are valid requests (so the property below is about the hostile value alone)', async () => {
    expect((await send('POST', `/v1/sessions/${sessionId}/skills/load`, JSON.stringify({ name: 'deploy-service' }))).statusCode).toBe(200);
    expect((await send('POST', `/v1/sessions/${sessionId}/replay`, JSON.stringify({ mcpPrompts: [mcpPrompt] }))).statusCode).toBe(200);
    const created = await send('POST', '/v1/skills/manage', JSON.stringify(manageBody('probe-skill', 'inv-probe', sessionId)));
    expect(created.statusCode, created.body).toBe(200);
    expect(parseRunReport(runReport).success).toBe(true);
    const resolve = await send('POST', '/v1/approvals/00000000-0000-0000-0000-000000000000/resolve', '{"decision":"reject"}');
    expect(resolve.json().error.code).toBe('ApprovalNotFound');
  });

  it('every field of every JSON body: a NUL, a lone surrogate or a value nested thousands deep', async () => {
    const before = await databaseFingerprint(harness.database.pool);
    const cases = bodyRoutes().flatMap(({ url, template }) => leafPaths(template).map((path) => ({ url, template, path })));
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...cases), hostileJson, async ({ url, template, path }, hostile) => {
        const response = await send('POST', url, withHostile(template, path, hostile));
        expect(response.statusCode, `${url} ${path.join('.')}: ${response.body.slice(0, 300)}`).toBeGreaterThanOrEqual(400);
        expect(response.statusCode, `${url} ${path.join('.')}: ${response.body.slice(0, 300)}`).toBeLessThan(500);
        expect(response.body, `${url} ${path.join('.')}`).toContain(fieldOf(path));
      }),
      { numRuns: 150 },
    );
    // Every field of every route at least once, with both kinds of hostile value.
    for (const { url, template, path } of cases) {
      for (const hostile of [JSON.stringify('a\u0000b'), JSON.stringify('a\ud800b'), `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`]) {
        const response = await send('POST', url, withHostile(template, path, hostile));
        expect([response.statusCode >= 400 && response.statusCode < 500, response.body], `${url} ${path.join('.')}`).toEqual([
          true,
          expect.stringContaining(fieldOf(path)),
        ]);
      }
    }
    expect(await databaseFingerprint(harness.database.pool)).toBe(before);
  });

  it('every path parameter and query string: NUL and percent-escapes that are no Unicode', async () => {
    const before = await databaseFingerprint(harness.database.pool);
    const routes: Array<{ method: 'GET' | 'POST'; url: (hostile: string) => string; field: string; escapes: string[]; body?: string }> = [
      { method: 'GET', url: (hostile) => `/v1/recall?goal=${hostile}&topK=2`, field: 'goal', escapes: NUL_ESCAPES },
      { method: 'GET', url: (hostile) => `/v1/recall?goal=deploy&topK=${hostile}`, field: 'topK', escapes: NUL_ESCAPES },
      { method: 'GET', url: (hostile) => `/v1/approvals?status=${hostile}`, field: 'status', escapes: NUL_ESCAPES },
      { method: 'GET', url: (hostile) => `/v1/skills?limit=${hostile}`, field: 'limit', escapes: NUL_ESCAPES },
      { method: 'GET', url: (hostile) => `/v1/sessions/${hostile}`, field: 'id', escapes: PATH_ESCAPES },
      {
        method: 'POST',
        url: (hostile) => `/v1/sessions/${hostile}/skills/load`,
        field: 'id',
        escapes: PATH_ESCAPES,
        body: '{"name":"deploy-service"}',
      },
      { method: 'POST', url: (hostile) => `/v1/sessions/${hostile}/replay`, field: 'id', escapes: PATH_ESCAPES, body: '{}' },
      {
        method: 'POST',
        url: (hostile) => `/v1/approvals/${hostile}/resolve`,
        field: 'id',
        escapes: PATH_ESCAPES,
        body: '{"decision":"reject"}',
      },
    ];
    const routeAndValue = fc.constantFrom(...routes).chain((route) => fc.tuple(fc.constant(route), hostileUrlPart(route.escapes)));
    await fc.assert(
      fc.asyncProperty(routeAndValue, async ([route, hostile]) => {
        const response = await send(route.method, route.url(hostile), route.body);
        expect(response.statusCode, `${route.url(hostile)}: ${response.body.slice(0, 300)}`).toBeGreaterThanOrEqual(400);
        expect(response.statusCode, `${route.url(hostile)}: ${response.body.slice(0, 300)}`).toBeLessThan(500);
      }),
      { numRuns: 80 },
    );
    for (const route of routes) {
      const response = await send(route.method, route.url('a%00b'), route.body);
      expect([response.statusCode, response.body], route.url('a%00b')).toEqual([400, expect.stringContaining(route.field)]);
    }
    expect(await databaseFingerprint(harness.database.pool)).toBe(before);
  });

  it('SKILL.md content with a NUL or a lone surrogate: refused naming the member, and an untrusted turn is still denied and recorded', async () => {
    for (const [index, bad] of ['x\u0000y', 'x\ud800y'].entries()) {
      const body = manageBody('content-skill', `inv-content-${index}`, sessionId);
      body.request.package.files['SKILL.md'] = skillMd('content-skill').replace('Rotate the key.', bad);
      const refused = await send('POST', '/v1/skills/manage', JSON.stringify(body));
      expect(refused.statusCode).toBe(422);
      expect(refused.json().error).toMatchObject({ code: 'SkillTextUnstorable', details: { rule: 'text.storable', field: 'SKILL.md' } });

      const untrusted = { ...body, invocationId: `inv-untrusted-${index}`, originTrust: 'untrusted' };
      const denied = await send('POST', '/v1/skills/manage', JSON.stringify(untrusted));
      expect(denied.statusCode).toBe(403);
      expect(denied.json().error).toMatchObject({ code: 'SkillAuthoringDenied', details: { reason: 'origin_trust' } });
      const events = await listSkillEvents(harness.database.pool, 'acme', { kind: 'authoring.denied' });
      expect(events.filter((event) => event.invocationId === `inv-untrusted-${index}`)).toHaveLength(1);
    }
    expect(await harness.skills.findRevision('acme', { name: 'content-skill', revision: null })).toBeUndefined();
  });

  it('originTrust is capped by the token: a default token cannot claim operator; one configured for it can', async () => {
    const before = await databaseFingerprint(harness.database.pool);
    const claimed = await send(
      'POST',
      '/v1/skills/manage',
      JSON.stringify({ ...manageBody('claimed-skill', 'inv-claim', sessionId), originTrust: 'operator' }),
    );
    expect(claimed.statusCode).toBe(403);
    expect(claimed.json().error).toEqual({
      code: 'OriginTrustNotAllowed',
      message: 'originTrust "operator" is above this token\'s maxOriginTrust "user"',
      details: { field: 'originTrust', originTrust: 'operator', maxOriginTrust: 'user' },
    });
    expect(await databaseFingerprint(harness.database.pool)).toBe(before);

    const allowed = await harness.app.inject({
      method: 'POST',
      url: '/v1/skills/manage',
      headers: bearer(operatorRuntime),
      payload: { ...manageBody('operator-skill', 'inv-operator', sessionId), originTrust: 'operator' },
    });
    expect(allowed.statusCode, allowed.body).toBe(200);
    expect(allowed.json()).toMatchObject({ status: 'installed', name: 'operator-skill' });
  });
  it("skill_manage in another tenant's session: 404 SessionNotFound, nothing written (issue #30 item 7)", async () => {
    await harness.services.agentSpecs.set('globex', 'ops-bot', []);
    await activateTenants(harness.services.rollout, ['globex']);
    const opened = await harness.app.inject({
      method: 'POST',
      url: '/v1/sessions',
      headers: bearer(otherTenant),
      payload: { agentId: 'ops-bot', tools: [] },
    });
    expect(opened.statusCode, opened.body).toBe(201);
    const foreignSession = opened.json<{ id: string }>().id;
    const before = await databaseFingerprint(harness.database.pool);
    const refused = await send('POST', '/v1/skills/manage', JSON.stringify(manageBody('foreign-skill', 'inv-foreign', foreignSession)));
    expect(refused.statusCode).toBe(404);
    expect(refused.json().error).toMatchObject({ code: 'SessionNotFound', details: { sessionId: foreignSession } });
    expect(await databaseFingerprint(harness.database.pool)).toBe(before);
  });

  it('a body that is not UTF-8: 400 InvalidUtf8 naming the field, nothing stored (issue #30 item 7)', async () => {
    const before = await databaseFingerprint(harness.database.pool);
    const json = JSON.stringify({
      ...runReport,
      runId: 'run-latin1',
      toolCalls: [{ ...runReport.toolCalls[0], args: { note: 'caf\u00e9' } }],
    });
    // "café" in Latin-1: 0xE9 alone is no UTF-8.
    const payload = Buffer.from(json, 'latin1');
    const response = await harness.app.inject({
      method: 'POST',
      url: '/v1/runs',
      headers: { ...bearer(everyScope), 'content-type': 'application/json' },
      payload,
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'InvalidUtf8', details: { field: 'toolCalls[0].args.note' } });
    expect(response.json().error.message).toMatch(/^the body is not valid UTF-8: toolCalls\[0\]\.args\.note /);
    expect(await databaseFingerprint(harness.database.pool)).toBe(before);
  });

  it('a package path with a percent-encoded .. segment is refused like .. (issue #30 item 7)', async () => {
    const before = await databaseFingerprint(harness.database.pool);
    for (const [index, path] of ['scripts/%2e%2e/x.sh', 'scripts/%2E%2E/x.sh', 'scripts/.%2e/x.sh', 'scripts/a%2fb.sh'].entries()) {
      const body = manageBody('encoded-path-skill', `inv-encoded-${index}`, sessionId);
      body.request.package.files = { 'SKILL.md': skillMd('encoded-path-skill'), [path]: 'echo hi' } as typeof body.request.package.files;
      const response = await send('POST', '/v1/skills/manage', JSON.stringify(body));
      expect(response.statusCode, `${path}: ${response.body}`).toBe(400);
      expect(response.json().error.code, path).toBe('SkillPackagePathEscape');
    }
    expect(await databaseFingerprint(harness.database.pool)).toBe(before);
  });
});
