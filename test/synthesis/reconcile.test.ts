import { describe, expect, it } from 'vitest';
import type { Procedure } from '../../src/procedures/procedure.ts';
import { dominates, reconcile, type Candidate } from '../../src/synthesis/reconcile.ts';

const steps = (...tools: string[]) => tools.map((tool) => ({ tool, argumentNames: [] }));

function procedure(overrides: Partial<Procedure> = {}): Procedure {
  return {
    id: 'p1',
    tenantId: 'default',
    skillId: 's1',
    name: 'deploy-service',
    revision: 2,
    whenToUse: 'Deploy a service',
    toolSequence: steps('repo.clone', 'ci.build', 'deploy.apply'),
    toolsRequired: ['repo.clone', 'ci.build', 'deploy.apply'],
    successCount: 4,
    attemptCount: 5,
    provenance: { source: 'synthesized', from_sessions: ['r1', 'r2', 'r3', 'r4'] },
    enabled: true,
    supersededBy: null,
    embeddingModel: 'm',
    embeddingDimension: 3,
    createdAt: new Date(0),
    lastUsedAt: null,
    observedAttempts: 0,
    observedSuccesses: 0,
    ...overrides,
  };
}

function candidate(overrides: Partial<Candidate> = {}): Candidate {
  return {
    name: 'deploy-service',
    toolSequence: steps('repo.clone', 'ci.build', 'deploy.apply'),
    successCount: 3,
    attemptCount: 3,
    fromSessions: ['r5', 'r6', 'r7'],
    ...overrides,
  };
}

describe('reconcile (ADD / UPDATE / NOOP / SUPERSEDE, never DELETE)', () => {
  it('adds when nothing existing is near', () => {
    expect(reconcile(candidate(), undefined)).toEqual({ action: 'add' });
  });

  it('is a no-op for the same procedure with no new runs', () => {
    const decision = reconcile(candidate({ fromSessions: ['r1', 'r2'] }), procedure());
    expect(decision.action).toBe('noop');
  });

  it('updates the same skill when new runs confirm it, merging the track record without double counting', () => {
    const decision = reconcile(candidate({ fromSessions: ['r4', 'r5', 'r6'], successCount: 3, attemptCount: 4 }), procedure());
    expect(decision.action).toBe('update');
    if (decision.action !== 'update') return;
    expect(decision.target.id).toBe('p1');
    expect(decision.trackRecord).toEqual({ successCount: 6, attemptCount: 8, fromSessions: ['r1', 'r2', 'r3', 'r4', 'r5', 'r6'] });
  });

  it('updates rather than forking when a near-duplicate keeps the name but changes the steps', () => {
    const decision = reconcile(candidate({ toolSequence: steps('repo.clone', 'deploy.apply') }), procedure());
    expect(decision.action).toBe('update');
  });

  it('supersedes a different procedure for the same goals when its track record is stronger', () => {
    const decision = reconcile(
      candidate({ name: 'ship-service', toolSequence: steps('pkg.build', 'deploy.apply'), successCount: 9, attemptCount: 9 }),
      procedure(),
    );
    expect(decision).toMatchObject({ action: 'supersede', weaker: { id: 'p1' } });
  });

  it('keeps the existing procedure when the different candidate is weaker, saying why', () => {
    const decision = reconcile(
      candidate({ name: 'ship-service', toolSequence: steps('pkg.build', 'deploy.apply'), successCount: 3, attemptCount: 4 }),
      procedure(),
    );
    expect(decision.action).toBe('noop');
    if (decision.action === 'noop') expect(decision.reason).toMatch(/weaker track record \(3\/4 vs 4\/5\)/);
  });

  it('judges track records by success rate, then by successes', () => {
    expect(dominates({ successCount: 9, attemptCount: 10 }, { successCount: 4, attemptCount: 5 })).toBe(true);
    expect(dominates({ successCount: 4, attemptCount: 5 }, { successCount: 9, attemptCount: 10 })).toBe(false);
    expect(dominates({ successCount: 8, attemptCount: 10 }, { successCount: 4, attemptCount: 5 })).toBe(true);
    expect(dominates({ successCount: 4, attemptCount: 5 }, { successCount: 4, attemptCount: 5 })).toBe(false);
  });
});
