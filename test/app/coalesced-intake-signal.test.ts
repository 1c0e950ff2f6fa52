import { describe, expect, it } from 'vitest';
import { createCoalescedIntakeSignal } from '../../src/app/coalesced-intake-signal.ts';

/** A send that answers after `ms`, recording what each signal carried. */
function slowSend(ms: number, fail?: (runIds: string[]) => boolean) {
  const sent: Array<{ intake: string; runIds: string[] }> = [];
  const send = async ({ tenantId, agentId }: { tenantId: string; agentId: string }, runIds: string[]) => {
    sent.push({ intake: `${tenantId}/${agentId}`, runIds });
    await new Promise((resolve) => setTimeout(resolve, ms));
    if (fail?.(runIds)) throw new Error('Temporal said no');
    return `intake/${tenantId}/${agentId}`;
  };
  return { sent, send };
}

describe('coalesced intake signals', () => {
  it('signals a lone run at once, and runs stored while a signal is in flight together in the next one', async () => {
    const { sent, send } = slowSend(50);
    const signal = createCoalescedIntakeSignal(send);
    const runIds = Array.from({ length: 20 }, (_, index) => `run-${index}`);
    await Promise.all(runIds.map((runId) => signal({ tenantId: 't', agentId: 'a', runId })));
    expect(sent).toEqual([
      { intake: 't/a', runIds: ['run-0'] },
      { intake: 't/a', runIds: runIds.slice(1) },
    ]);
  });

  it("sends every run of a tenant, whatever its agent, to one intake: the first agent's; tenants stay apart", async () => {
    const { sent, send } = slowSend(30);
    const signal = createCoalescedIntakeSignal(send);
    const answered = await Promise.all([
      signal({ tenantId: 't', agentId: 'a', runId: 'r1' }),
      signal({ tenantId: 't', agentId: 'b', runId: 'r2' }),
      signal({ tenantId: 'u', agentId: 'b', runId: 'r3' }),
      signal({ tenantId: 't', agentId: 'c', runId: 'r4' }),
      signal({ tenantId: 'u', agentId: 'a', runId: 'r5' }),
    ]);
    // Each run is answered with the intake it went to, not its own agent's.
    expect(answered).toEqual(['intake/t/a', 'intake/t/a', 'intake/u/b', 'intake/t/a', 'intake/u/b']);
    // Later, alone: still the same intake.
    await expect(signal({ tenantId: 't', agentId: 'c', runId: 'r6' })).resolves.toBe('intake/t/a');
    expect(sent).toEqual([
      { intake: 't/a', runIds: ['r1'] },
      { intake: 'u/b', runIds: ['r3'] },
      { intake: 't/a', runIds: ['r2', 'r4'] },
      { intake: 'u/b', runIds: ['r5'] },
      { intake: 't/a', runIds: ['r6'] },
    ]);
  });

  it('rejects every run of a failed signal, and only those; the next run is signalled again', async () => {
    const { sent, send } = slowSend(20, (runIds) => runIds.includes('bad'));
    const signal = createCoalescedIntakeSignal(send);
    const results = await Promise.allSettled(
      [
        { agentId: 'a', runId: 'ok' },
        { agentId: 'b', runId: 'bad' },
        { agentId: 'a', runId: 'with-bad' },
      ].map((run) => signal({ tenantId: 't', ...run })),
    );
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
    await expect(signal({ tenantId: 't', agentId: 'a', runId: 'later' })).resolves.toBe('intake/t/a');
    expect(sent).toEqual([
      { intake: 't/a', runIds: ['ok'] },
      { intake: 't/a', runIds: ['bad', 'with-bad'] },
      { intake: 't/a', runIds: ['later'] },
    ]);
  });
});
