import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, openApiHarness, token, type ApiHarness } from '../api/api-harness.ts';

const writer = token('acme', ['run.write']);

/** A run report with no tool call: stored and answered without Temporal (no review can want it). */
const report = (runId: string, goal: string) => ({
  agentId: 'agent',
  runId,
  goal,
  status: 'completed',
  startedAt: '2026-01-01T00:00:00Z',
  completedAt: '2026-01-01T00:01:00Z',
  toolCalls: [],
});

/** Issue #30 item 2: two reports of one new runId at once. */
describe('concurrent reports of one runId', () => {
  let harness: ApiHarness;
  const post = (body: unknown) =>
    harness.app.inject({
      method: 'POST',
      url: '/v1/runs',
      headers: { ...bearer(writer), 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
  const storedGoals = async (prefix: string) =>
    new Map(
      (
        await harness.database.pool.query<{ run_id: string; goal: string }>(
          'SELECT run_id, goal FROM runs WHERE tenant_id = $1 AND run_id LIKE $2',
          ['acme', `${prefix}%`],
        )
      ).rows.map((row) => [row.run_id, row.goal]),
    );

  beforeAll(async () => {
    harness = await openApiHarness([writer]);
  }, 120_000);
  afterAll(async () => {
    await harness?.close();
  });

  it('with different content: exactly one is stored and answered 202, the other alone gets 409 RunConflict', async () => {
    // All at once, so pairs land in one group-commit transaction behind the first one in flight.
    const pairs = Array.from({ length: 50 }, (_, index) => `conflicting-${index}`);
    const answers = await Promise.all(
      pairs.flatMap((runId) => ['first', 'second'].map(async (goal) => ({ runId, goal, response: await post(report(runId, goal)) }))),
    );
    const stored = await storedGoals('conflicting-');
    expect(stored.size).toBe(pairs.length);
    for (const runId of pairs) {
      const [accepted, refused] = ['first', 'second'].map((goal) =>
        answers.find((answer) => answer.runId === runId && answer.goal === goal)!,
      );
      const statuses = [accepted!.response.statusCode, refused!.response.statusCode].sort();
      expect(statuses, runId).toEqual([202, 409]);
      const winner = accepted!.response.statusCode === 202 ? accepted! : refused!;
      const loser = winner === accepted ? refused! : accepted!;
      expect(loser.response.json()).toMatchObject({ error: { code: 'RunConflict' } });
      expect(stored.get(runId)).toBe(winner.goal);
    }
  });

  it('with the same content: both are answered 202 and the run is stored once', async () => {
    const pairs = Array.from({ length: 50 }, (_, index) => `repeated-${index}`);
    const answers = await Promise.all(pairs.flatMap((runId) => [1, 2].map(() => post(report(runId, `goal of ${runId}`)))));
    expect(answers.map((answer) => answer.statusCode)).toEqual(answers.map(() => 202));
    const stored = await storedGoals('repeated-');
    expect([...stored.keys()].sort()).toEqual([...pairs].sort());
  });
});
