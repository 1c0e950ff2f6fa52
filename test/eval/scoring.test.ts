import { describe, expect, it } from 'vitest';
import { comparePaired } from '../../src/eval/paired-eval.ts';
import { formatEvalReport } from '../../src/eval/eval-table.ts';
import type { EvalReport } from '../../src/eval/run-eval.ts';
import {
  clusterPurity,
  recurringFamilies,
  scoreInSample,
  scoreRecall,
  scoreSkills,
  skillComposition,
  type FamilyLabel,
  type LabelledRun,
} from '../../src/eval/scoring.ts';

const labels: Record<string, FamilyLabel> = {
  a1: 'deploy',
  a2: 'deploy',
  a3: 'deploy',
  a4: 'deploy',
  a5: 'deploy',
  b1: 'restore',
  b2: 'restore',
  b3: 'restore',
  b4: 'restore',
  c1: 'grant',
  c2: 'grant',
  c3: 'grant',
  n1: null,
  n2: null,
};
const familyOf = (runId: string): FamilyLabel => labels[runId] ?? null;

describe('clusterPurity', () => {
  it('counts the largest family of each cluster of two or more runs, over the runs in them', () => {
    const purity = clusterPurity([['a1', 'a2', 'a3', 'b1'], ['b2', 'b3'], ['c1']], familyOf);
    expect(purity).toEqual({ clusters: 2, clusteredRuns: 6, purity: 5 / 6 });
  });

  it('treats unlabelled runs as classes of their own, so a cluster of one-offs is not pure', () => {
    expect(clusterPurity([['n1', 'n2']], familyOf).purity).toBe(0.5);
    expect(clusterPurity([['a1', 'n1', 'n2']], familyOf).purity).toBeCloseTo(1 / 3);
  });

  it('is 1 when there is no cluster at all', () => {
    expect(clusterPurity([], familyOf)).toEqual({ clusters: 0, clusteredRuns: 0, purity: 1 });
  });
});

describe('recurringFamilies', () => {
  const run = (runId: string, family: FamilyLabel, successfulSteps = 3, status: LabelledRun['status'] = 'completed'): LabelledRun => ({
    runId,
    family,
    status,
    successfulSteps,
  });

  it('keeps families with at least 3 completed runs of at least 3 successful steps', () => {
    const recurring = recurringFamilies([
      run('1', 'deploy'),
      run('2', 'deploy'),
      run('3', 'deploy'),
      run('4', 'short', 2),
      run('5', 'short', 2),
      run('6', 'short', 2),
      run('7', 'short'),
      run('8', 'flaky'),
      run('9', 'flaky'),
      run('10', 'flaky', 3, 'failed'),
      run('11', null),
      run('12', null),
      run('13', null),
    ]);
    expect([...recurring]).toEqual([['deploy', 3]]);
  });
});

describe('scoreSkills', () => {
  const recurring = new Map([
    ['deploy', 5],
    ['restore', 4],
    ['grant', 3],
  ]);

  it('recalls a family when exactly one live skill has ≥ 80 % of its provenance from it', () => {
    const scores = scoreSkills(
      [
        { name: 'deploy-service', runIds: ['a1', 'a2', 'a3', 'a4', 'b1'] }, // 80 % deploy: owns it
        { name: 'restore-db', runIds: ['b2', 'b3', 'c1'] }, // 67 % restore: mixes
        { name: 'grant-access', runIds: ['c1', 'c2'] },
        { name: 'grant-access-again', runIds: ['c3'] },
      ],
      familyOf,
      recurring,
    );
    expect(scores.recalledFamilies).toEqual(['deploy']);
    expect(scores.missedFamilies).toEqual(['grant', 'restore']);
    expect(scores.mixingSkills.map((skill) => skill.name)).toEqual(['restore-db']);
    expect([...scores.familiesWithSeveralSkills]).toEqual([['grant', ['grant-access', 'grant-access-again']]]);
    expect(scores.owners.get('grant')).toEqual(['grant-access', 'grant-access-again']);
  });

  it('describes a skill by its plurality family and that family’s share', () => {
    expect(skillComposition({ name: 's', runIds: ['a1', 'b1', 'b2', 'n1'] }, familyOf)).toEqual({
      name: 's',
      runs: 4,
      family: 'restore',
      share: 0.5,
      families: 3,
    });
    expect(skillComposition({ name: 'odd', runIds: ['n1', 'n2'] }, familyOf)).toMatchObject({ family: null, share: 0.5, families: 2 });
  });
});

describe('scoreRecall and scoreInSample', () => {
  const owners = new Map([
    ['deploy', ['deploy-service']],
    ['restore', ['restore-db']],
  ]);

  it('counts top-1 and top-2 hits on the owner of the goal’s family, and anything returned for a negative', () => {
    const scores = scoreRecall(
      [
        { goal: 'ship it', family: 'deploy', returned: ['deploy-service'] },
        { goal: 'roll out', family: 'deploy', returned: ['restore-db', 'deploy-service'] },
        { goal: 'restore', family: 'restore', returned: [] },
        { goal: 'grant', family: 'grant', returned: ['deploy-service'] },
        { goal: 'a poem', family: null, returned: ['deploy-service'] },
        { goal: 'a recipe', family: null, returned: [] },
      ],
      owners,
    );
    // grant has no owning skill: not covered, and given deploy-service a wrong skill where none was right;
    // "roll out" got restore-db first: a wrong skill for a covered family.
    expect(scores).toEqual({
      positives: 4,
      covered: 3,
      top1: 1,
      top2: 2,
      answered: 3,
      wrongSkill: 2,
      wrongSkillUncovered: 1,
      negatives: 2,
      falsePositives: 1,
      // "restore" got silence where restore-db was right; "grant" should have had silence.
      misses: [
        { goal: 'roll out', family: 'deploy', returned: ['restore-db', 'deploy-service'], owners: ['deploy-service'] },
        { goal: 'restore', family: 'restore', returned: [], owners: ['restore-db'] },
        { goal: 'grant', family: 'grant', returned: ['deploy-service'], owners: [] },
        { goal: 'a poem', family: null, returned: ['deploy-service'], owners: [] },
      ],
    });
  });

  it('counts a skill’s own goals that get it back first', () => {
    expect(
      scoreInSample([
        { skill: 'x', returned: ['x', 'y'] },
        { skill: 'x', returned: ['y', 'x'] },
        { skill: 'y', returned: [] },
      ]),
    ).toEqual({ goals: 3, top1: 1 });
  });
});

describe('formatEvalReport', () => {
  it('prints every figure of the report in one table, then the passes, the live skills and the missed families', () => {
    const report: EvalReport = {
      tenantId: 'eval-x',
      settings: { embeddingModel: 'm', similarityTau: 0.5 },
      corpus: { runs: 10, labelledFamilies: 3, unlabelledRuns: 1, recurringFamilies: 2, heldoutPositives: 4, heldoutNegatives: 2 },
      passes: [
        {
          id: 'synthesis/eval-x/1',
          status: 'completed',
          outcome: null,
          counts: {
            runsSeen: 10,
            sequences: 9,
            clusters: 3,
            qualifying: 2,
            added: 1,
            updated: 0,
            noop: 1,
            superseded: 0,
            skipped: 0,
            pending: 0,
            carried: 0,
          },
        },
      ],
      converged: true,
      clusters: { clusters: 3, clusteredRuns: 9, purity: 8 / 9, qualifying: { clusters: 2, clusteredRuns: 7, purity: 1 } },
      skills: {
        total: 1,
        live: 1,
        mixing: 0,
        familiesWithSeveralSkills: 0,
        list: [{ name: 'rotate-key', runs: 4, family: 'rotate', share: 1, families: 1 }],
      },
      familyRecall: { recurring: 2, recalled: 1, rate: 0.5, missed: ['deploy'] },
      heldout: {
        positives: 4,
        covered: 2,
        top1: 1,
        top2: 2,
        answered: 3,
        wrongSkill: 2,
        wrongSkillUncovered: 1,
        wrongSkillRate: 0.5,
        top1Rate: 0.25,
        top2Rate: 0.5,
        top1CoveredRate: 0.5,
        top2CoveredRate: 1,
        negatives: 2,
        falsePositives: 1,
        falsePositiveRate: 0.5,
      },
      inSample: { goals: 4, top1: 3, rate: 0.75 },
      paired: null,
      recallScores: { inSample: [1, 1, 1, 0.4], heldoutCovered: [0.8, 0.3], negatives: [0.2, 0.5] },
      timings: { ingestMs: 1200, passesMs: 30_000, scoringMs: 800, totalMs: 32_000 },
    };
    const table = formatEvalReport(report);
    expect(table).toMatch(/cluster purity \(all \/ qualifying\)\s+88\.9 % \/ 100\.0 %/);
    expect(table).toMatch(/family recall \(one clean skill\)\s+1 \/ 2 = 50\.0 %/);
    expect(table).toMatch(/held-out recall top-1 \/ top-2\s+1 \/ 2 of 4 = 25\.0 % \/ 50\.0 %/);
    expect(table).toMatch(/held-out goals answered at all\s+3 \/ 4/);
    expect(table).toMatch(/held-out goals given a wrong skill \(family without one\)\s+2 \/ 4 = 50\.0 % \(1\)/);
    expect(table).toMatch(/held-out top-1 \/ top-2 where the family has a skill\s+1 \/ 2 of 2 = 50\.0 % \/ 100\.0 %/);
    expect(table).toMatch(/false positives on negatives\s+1 \/ 2 = 50\.0 %/);
    expect(table).toMatch(/in-sample recall top-1\s+3 \/ 4 = 75\.0 %/);
    expect(table).toMatch(/time: ingest \/ passes \/ scoring \/ total\s+1\.2 s \/ 30\.0 s \/ 0\.8 s \/ 32\.0 s/);
    expect(table).toContain('  rotate-key  4 runs  rotate 100.0 %');
    expect(table).toMatch(/without exactly one clean skill \(1\):\n {2}deploy$/);
    expect(formatEvalReport({ ...report, heldout: null })).toMatch(/held-out recall top-1 \/ top-2\s+–/);

    const gold = ['repo.clone', 'build.run'];
    const { report: paired } = comparePaired(
      [
        {
          goal: 'deploy it',
          family: 'deploy',
          tools: ['repo.clone', 'web.search', 'build.run'],
          gold,
          recalled: { name: 'deploy', tools: gold },
        },
      ],
      { modelPolicy: 'm', policyProfile: 'none', authoringVersion: 'authoring-1' },
    );
    const withPaired = formatEvalReport({ ...report, paired });
    expect(withPaired).toMatch(/paired \(offline\): goals \/ recalled\s+1 \/ 1/);
    expect(withPaired).toMatch(/paired: tool steps saved per goal \(95 %\)\s+1\.00 \[1\.00, 1\.00\]/);
    expect(withPaired).toMatch(/paired: gold sequence without recall\s+0 \/ 1 = 0\.0 % \[0\.0 %, 97\.5 %\]/);
    expect(withPaired).toMatch(/paired: gold sequence with recall\s+1 \/ 1 = 100\.0 % \[2\.5 %, 100\.0 %\]/);
    expect(withPaired).toMatch(/paired: rollout check \(n, b, c\)\s+fails: 1, 1, 0, improvement 100\.0 %/);
    expect(table).not.toContain('paired');
  });
});
