import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Embedder } from '../../src/embedding/embedder.ts';
import { buildApiServer } from '../../src/api/server.ts';
import { insertProcedure } from '../../src/procedures/procedure-repository.ts';
import { withTransaction } from '../../src/store/database.ts';
import { skillPackage } from '../skills/skill-fixtures.ts';
import { ALL_SCOPES, bearer, openApiHarness, token, type ApiHarness } from './api-harness.ts';

/**
 * Tenant isolation, as a property: random tenants sharing skill names, each with its own
 * sentinel in every body, member and when_to_use; random requests with random tokens. No route
 * ever returns, loads, recalls or resolves another tenant's data, and another tenant's session
 * id is a 404 for every session route.
 */
const SKILL_NAMES = ['shared-alpha', 'shared-beta', 'shared-gamma'];
let harness: ApiHarness;
let embedder: Embedder;
const vectors = new Map<string, Float32Array>();
let runNumber = 0;

beforeAll(async () => {
  harness = await openApiHarness([], { withRecall: true, recallThreshold: 0 });
  // A new tenant takes the configured model.
  embedder = await harness.services.embedder('iso-setup');
  for (const name of SKILL_NAMES) vectors.set(name, (await embedder.embed([`when the ${name} task comes up`], 'document'))[0]!);
});

afterAll(async () => {
  await harness?.close();
});

const sentinel = (tenant: string, name: string) => `SENTINEL::${tenant}::${name}`;

describe('tenant isolation (property)', () => {
  it("no route returns, loads, recalls or resolves another tenant's data", async () => {
    const { skills, database, services } = harness;
    const served = { ownLoads: 0, recalled: 0 };
    const { agentSpecs } = services;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.subarray(SKILL_NAMES, { minLength: 1 }), { minLength: 2, maxLength: 3 }),
        fc.array(
          fc.record({
            caller: fc.nat(),
            target: fc.nat(),
            name: fc.constantFrom(...SKILL_NAMES),
            route: fc.constantFrom('skills', 'recall', 'open', 'load', 'member', 'get', 'replay'),
          }),
          {
            minLength: 4,
            maxLength: 12,
          },
        ),
        async (tenantSkills, requests) => {
          runNumber += 1;
          const tenants = tenantSkills.map((_, index) => `iso${runNumber}-t${index}`);
          const tokens = tenants.map((tenant) => token(tenant, ALL_SCOPES));
          const sessions: string[] = [];
          for (const [index, tenant] of tenants.entries()) {
            for (const name of tenantSkills[index]!) {
              const revision = await skills.install(
                tenant,
                skillPackage(
                  { name, description: `The ${name} skill.` },
                  {
                    body: `# ${name}\n\n${sentinel(tenant, name)} body`,
                    extraFiles: { 'references/notes.md': `${sentinel(tenant, name)} member` },
                  },
                ),
                { source: 'operator' },
              );
              await withTransaction(database.pool, (client) =>
                insertProcedure(client, tenant, {
                  skillId: revision.skillId,
                  name,
                  revision: revision.revision,
                  whenToUse: `when the ${name} task comes up ${sentinel(tenant, name)}`,
                  toolSequence: [],
                  toolsRequired: [],
                  successCount: 3,
                  attemptCount: 3,
                  fromSessions: [],
                  embedding: vectors.get(name)!,
                  embeddingModel: embedder.modelId,
                }),
              );
            }
            await agentSpecs.set(tenant, 'agent', tenantSkills[index]!);
          }
          // Route the requests through a server that knows exactly these tokens.
          const server = await buildApiServer({ ...harness.services, tokens });
          try {
            for (const tenantIndex of tenants.keys()) {
              const opened = await server.inject({
                method: 'POST',
                url: '/v1/sessions',
                headers: bearer(tokens[tenantIndex]!),
                payload: { agentId: 'agent', tools: [] },
              });
              expect(opened.statusCode).toBe(201);
              sessions.push(opened.json().id);
            }
            for (const request of requests) {
              const caller = request.caller % tenants.length;
              const target = request.target % tenants.length;
              const headers = bearer(tokens[caller]!);
              const sessionId = sessions[target]!;
              let response;
              switch (request.route) {
                case 'skills':
                  response = await server.inject({ method: 'GET', url: '/v1/skills', headers });
                  break;
                case 'recall':
                  response = await server.inject({
                    method: 'GET',
                    url: `/v1/recall?goal=${encodeURIComponent(`the ${request.name} task`)}&topK=5`,
                    headers,
                  });
                  break;
                case 'open':
                  response = await server.inject({
                    method: 'POST',
                    url: '/v1/sessions',
                    headers,
                    payload: { agentId: 'agent', tools: [] },
                  });
                  break;
                case 'load':
                case 'member':
                  response = await server.inject({
                    method: 'POST',
                    url: `/v1/sessions/${sessionId}/skills/load`,
                    headers,
                    payload: request.route === 'member' ? { name: request.name, path: 'references/notes.md' } : { name: request.name },
                  });
                  break;
                case 'get':
                  response = await server.inject({ method: 'GET', url: `/v1/sessions/${sessionId}`, headers });
                  break;
                case 'replay':
                  response = await server.inject({ method: 'POST', url: `/v1/sessions/${sessionId}/replay`, headers, payload: {} });
                  break;
              }
              const text = response.body;
              for (const [index, tenant] of tenants.entries()) {
                if (index === caller) continue;
                expect(text).not.toContain(`SENTINEL::${tenant}::`);
              }
              if (['load', 'member', 'get', 'replay'].includes(request.route) && target !== caller) {
                expect(response.statusCode).toBe(404);
                expect(response.json().error.code).toBe('SessionNotFound');
              }
              if (['load', 'member'].includes(request.route) && response.statusCode === 200) served.ownLoads += 1;
              if (request.route === 'recall') {
                served.recalled += (response.json().skills as unknown[]).length;
                for (const skill of response.json().skills as { whenToUse: string }[])
                  expect(skill.whenToUse).toContain(`SENTINEL::${tenants[caller]}::`);
              }
            }
          } finally {
            await server.close();
          }
        },
      ),
      { numRuns: 12, seed: 20261129 },
    );
    // The property saw real data flowing, not only refusals.
    expect(served.ownLoads).toBeGreaterThan(0);
    expect(served.recalled).toBeGreaterThan(0);
  });
});
