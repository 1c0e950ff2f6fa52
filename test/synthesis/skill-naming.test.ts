import { describe, expect, it } from 'vitest';
import { buildClusterEvidence, type EvidenceRun } from '../../src/synthesis/cluster-evidence.ts';
import { describeProcedure, nameProcedure } from '../../src/synthesis/skill-naming.ts';
import { testRun } from '../support/run-reports.ts';

const runsOf = (goals: string[], tools: string[]): EvidenceRun[] =>
  goals.map((goal, index) => {
    const report = testRun(
      'acme',
      `run-${index}`,
      goal,
      tools.map((tool) => ({ tool, success: true })),
    );
    return { runId: report.runId, goal: report.goal, status: report.status, toolCalls: report.toolCalls };
  });

describe('skill names: a short verb phrase of the task (src/synthesis/skill-naming.ts)', () => {
  it('names the task in the words its tools and goals agree on', () => {
    const evidence = buildClusterEvidence(
      runsOf(
        [
          'refund the order for Ines and email her',
          'please refund order A-17 and send an email',
          'refund this order, then email the receipt',
        ],
        ['orders.get', 'payments.refund', 'email.send'],
      ),
      3,
    );
    expect(nameProcedure(evidence)).toBe('refund-order');
  });

  it('gives a verb the goals say but no tool word they say its object from the typical goal', () => {
    // The tools say "nda"; the goals' authors say "confidentiality agreement" and "non-disclosure agreement".
    const evidence = buildClusterEvidence(
      runsOf(
        [
          'export the confidentiality agreement for Hooli',
          'export the confidentiality agreement of Initech',
          'please export the non-disclosure agreement for Globex',
        ],
        ['legal.session.open', 'legal.nda.get', 'legal.nda.export', 'legal.nda.share.link'],
      ),
      3,
    );
    const name = nameProcedure(evidence);
    expect(name.split('-')[0]).toBe('export');
    expect(name.split('-')).toContain('agreement');
    expect(name.split('-').length).toBeGreaterThan(1);
  });

  it('reads the request inside the words a goal wraps it in', () => {
    const wrapped = [
      'time to roll over the purchase order (Cyberdyne)',
      'next up: roll over the purchase order / Acme',
      'request from Initech — they want us to roll over the purchase order',
      'hey, roll over the purchase order when you get a chance',
    ];
    for (const [index, goal] of wrapped.entries()) {
      const evidence = buildClusterEvidence(runsOf([goal, goal, goal], ['erp.session.open', 'erp.order.get', 'erp.order.renew']), 3);
      expect(nameProcedure(evidence), goal).toMatch(/^roll-/);
      expect(describeProcedure(evidence)[0], goal).toMatch(/^Roll over the purchase order/);
      if (index === 0) expect(nameProcedure(evidence)).toBe('roll-purchase-order');
    }
  });
});
