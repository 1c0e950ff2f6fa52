import { describe, expect, it } from 'vitest';
import { RARITY_PRIOR_RUNS, toolRarity } from '../../src/clustering/tool-rarity.ts';

describe('toolRarity', () => {
  const runs = [
    ...Array.from({ length: 3 }, () => ['refund.create', 'email.send']),
    ...Array.from({ length: 200 }, (_, index) => [`job${index % 40}.step`, 'email.send']),
  ];
  const rarity = toolRarity(runs, 3);

  it('weighs a tool no more runs call than a recurring family needs at 1, a tool every run calls near nothing', () => {
    expect(rarity('refund.create')).toBe(1);
    expect(rarity('email.send')).toBeLessThan(0.35);
    expect(rarity('job7.step')).toBeGreaterThan(rarity('email.send'));
    expect(rarity('job7.step')).toBeLessThan(1);
  });

  it('weighs an off-plan call — as rare, but beside another procedure each time — below a step of one procedure', () => {
    const tenant = [
      // One procedure, its last step called by 6 runs.
      ...Array.from({ length: 6 }, () => ['crm.deal.get', 'crm.deal.renew', 'crm.receipt.send']),
      // A shell command 6 runs made, each in the middle of a different procedure.
      ...Array.from({ length: 6 }, (_, index) => [`job${index}.open`, 'shell.exec', `job${index}.close`]),
      ...Array.from({ length: 60 }, (_, index) => [`job${index % 6}.open`, `job${index % 6}.close`]),
    ];
    const specificity = toolRarity(tenant, 3);
    expect(specificity('crm.deal.renew')).toBeGreaterThan(0.5);
    expect(specificity('shell.exec')).toBeLessThan(specificity('crm.deal.renew') / 2);
  });

  it('counts a tool once per run, whatever its repeats', () => {
    const repeated = toolRarity([['a', 'a', 'a'], ['b']], 3);
    const once = toolRarity([['a'], ['b']], 3);
    expect(repeated('a')).toBe(once('a'));
  });

  it(`reads a small tenant beside ${RARITY_PRIOR_RUNS} runs that call none of its tools: one procedure in every run still carries evidence`, () => {
    const nine = toolRarity(
      Array.from({ length: 9 }, () => ['search_issues', 'create_issue', 'add_labels']),
      3,
    );
    expect(nine('create_issue')).toBeGreaterThan(0.6);
  });

  it('keeps every weight above zero, and a tool never seen at the weight of the rarest', () => {
    const everywhere = toolRarity(
      Array.from({ length: 10_000 }, () => ['ping']),
      3,
    );
    expect(everywhere('ping')).toBeGreaterThan(0);
    expect(rarity('never.called')).toBe(1);
  });
});
