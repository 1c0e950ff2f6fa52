import type { RolloutGate } from '../../src/rollout/rollout-gate.ts';

/**
 * Activates tenants the way an operator does: a recorded override through the real gate, for
 * the combination the gate's deployment runs. For tests of authoring and review themselves, not
 * of the rollout gate (test/rollout/activation.store.test.ts).
 */
export async function activateTenants(gate: Pick<RolloutGate, 'override'>, tenantIds: readonly string[]): Promise<void> {
  for (const tenantId of tenantIds) {
    await gate.override(tenantId, {
      action: 'grant',
      decidedBy: 'test-suite',
      reason: 'exercising authoring and review, not the rollout gate',
    });
  }
}
