import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTHORING_IMPLEMENTATION_VERSION } from '../../src/rollout/activation.ts';
import { bearer, openApiHarness, token, type ApiHarness } from './api-harness.ts';

const writer = token('acme', ['rollout.write', 'rollout.read']);
const reader = token('acme', ['rollout.read']);
const combination = { modelPolicy: 'llama3.1', policyProfile: 'none', authoringVersion: AUTHORING_IMPLEMENTATION_VERSION };
const pair = (index: number) => ({
  caseId: `api-${index}`,
  baselineCompleted: index >= 10,
  authoredCompleted: true,
  baselinePolicyFailures: 0,
  authoredPolicyFailures: 0,
  ...combination,
});

describe('POST /v1/rollout/evidence and GET /v1/rollout/check', () => {
  let harness: ApiHarness;
  beforeAll(async () => {
    harness = await openApiHarness([writer, reader]);
  });
  afterAll(async () => {
    await harness?.close();
  });

  it('records pairs for the token tenant, idempotently, and checks them as the CLI does', async () => {
    const pairs = Array.from({ length: 30 }, (_, index) => pair(index));
    const first = await harness.app.inject({ method: 'POST', url: '/v1/rollout/evidence', headers: bearer(writer), payload: { pairs } });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ samples: 30, inserted: 30, unchanged: 0, errors: [] });
    const again = await harness.app.inject({ method: 'POST', url: '/v1/rollout/evidence', headers: bearer(writer), payload: { pairs } });
    expect(again.json()).toMatchObject({ inserted: 0, unchanged: 30 });

    const check = await harness.app.inject({
      method: 'GET',
      url: `/v1/rollout/check?${new URLSearchParams(combination).toString()}`,
      headers: bearer(reader),
    });
    expect(check.statusCode).toBe(200);
    expect(check.json()).toMatchObject({ tenantId: 'acme', n: 30, b: 10, c: 0, passed: true, policyRegression: false, reasons: [] });
  });

  it('refuses invalid pairs with 400 and every error, recording nothing, and a token without rollout.write with 403', async () => {
    const bad = await harness.app.inject({
      method: 'POST',
      url: '/v1/rollout/evidence',
      headers: bearer(writer),
      payload: { pairs: [pair(100), { ...pair(101), authoredPolicyFailures: 1.5 }] },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ invalid: 1, inserted: 0, errors: [{ line: 2, path: 'authoredPolicyFailures', value: '1.5' }] });
    const forbidden = await harness.app.inject({
      method: 'POST',
      url: '/v1/rollout/evidence',
      headers: bearer(reader),
      payload: { pairs: [pair(102)] },
    });
    expect(forbidden.statusCode).toBe(403);
    const check = await harness.app.inject({
      method: 'GET',
      url: `/v1/rollout/check?${new URLSearchParams(combination).toString()}`,
      headers: bearer(reader),
    });
    expect(check.json().n).toBe(30);
  });
});
