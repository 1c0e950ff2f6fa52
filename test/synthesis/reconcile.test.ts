import { describe, expect, it } from 'vitest';
import type { Procedure } from '../../src/procedures/procedure.ts';
import { toolsRepeatedDifferently } from '../../src/clustering/repeated-tools.ts';
import { toolSequenceSimilarity } from '../../src/procedures/tool-sequence.ts';
import { cosine } from '../../src/clustering/cosine.ts';
import {
  decide,
  goalAffinity,
  matchProcedure,
  oneStepApart,
  observedOptionalTools,
  sameStepsReordered,
  sameUpToOptionalSteps,
  settleAlreadyLearned,
  wilsonLowerBound,
  type ClusterProfile,
  type ProcedureProfile,
  type ReconcileThresholds,
} from '../../src/synthesis/reconcile.ts';

const steps = (...tools: string[]) => tools.map((tool) => ({ tool, argumentNames: [] }));
const thresholds: ReconcileThresholds = { sameKindOfGoal: 0.6, sameJob: 0.95 };
/** Unit vectors at a chosen cosine to e1. */
const goalAt = (cosine: number) => Float32Array.from([cosine, Math.sqrt(1 - cosine * cosine), 0]);

function procedure(overrides: Partial<Procedure> = {}): Procedure {
  return {
    id: 'p1',
    tenantId: 'default',
    skillId: 's1',
    name: 'deploy-service',
    revision: 2,
    whenToUse: 'Use for goals like "deploy the billing service".',
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

const profile = (overrides: Partial<Procedure> = {}, goal = goalAt(1)): ProcedureProfile => ({
  procedure: procedure(overrides),
  goalCentroid: goal,
});

function cluster(overrides: Partial<ClusterProfile> = {}): ClusterProfile {
  return { tools: ['repo.clone', 'ci.build', 'deploy.apply'], goalCentroid: goalAt(1), successCount: 3, attemptCount: 3, ...overrides };
}

describe('tool-sequence similarity', () => {
  it('scores an optional step as near, a different procedure as far; a repeated successful call is a step of its own', () => {
    expect(toolSequenceSimilarity(['a', 'b', 'c'], ['a', 'b', 'c'])).toBe(1);
    // details of two items are not a retry of one (a failed attempt is not in a sequence of successful calls)
    expect(toolSequenceSimilarity(['a', 'b', 'b', 'c'], ['a', 'b', 'c'])).toBeCloseTo(6 / 7);
    expect(toolSequenceSimilarity(['a', 'b', 'c', 'd'], ['a', 'b', 'x', 'c', 'd'])).toBeCloseTo(8 / 9);
    expect(toolSequenceSimilarity(['a', 'b', 'c'], ['a', 'x', 'y'])).toBeCloseTo(1 / 3);
  });
});

describe('reconcile by procedure (ADD / UPDATE / NOOP / SUPERSEDE, never DELETE)', () => {
  it('adds when no procedure shares the tool sequence or the job', () => {
    const match = matchProcedure(cluster({ tools: ['pay.quote', 'pay.charge', 'mail.send'] }), [profile({}, goalAt(0.7))], thresholds);
    expect(match).toBeUndefined();
    expect(decide(cluster(), match, 3).action).toBe('add');
  });

  it('an identical procedure is the same skill whatever its goals read like: UPDATE with new runs, NOOP without', () => {
    const lockAndStart = ['lockDoors', 'pressBrakePedal', 'startEngine'];
    const existing = profile({ name: 'start-the-car', toolSequence: steps(...lockAndStart) }, goalAt(0.2));
    const match = matchProcedure(cluster({ tools: lockAndStart }), [existing], thresholds);
    expect(match).toMatchObject({ relation: 'same-procedure', target: { name: 'start-the-car' }, sequenceSimilarity: 1 });
    expect(decide(cluster(), match, 2)).toMatchObject({ action: 'update', target: { name: 'start-the-car' } });
    expect(decide(cluster(), match, 0)).toMatchObject({ action: 'noop', reason: expect.stringMatching(/every run already counted/) });
  });

  it('an optional step is the same procedure for the same kind of goal; otherwise it competes only for the same job', () => {
    const withTests = (goal: number) => profile({ toolSequence: steps('repo.clone', 'ci.build', 'ci.test', 'deploy.apply') }, goalAt(goal));
    expect(matchProcedure(cluster(), [withTests(0.8)], thresholds)?.relation).toBe('same-procedure');
    expect(matchProcedure(cluster(), [withTests(0.3)], thresholds)).toBeUndefined();
    const otherTools = profile({ toolSequence: steps('repo.clone', 'pkg.build', 'deploy.apply') }, goalAt(0.97));
    expect(matchProcedure(cluster(), [otherTools], thresholds)).toMatchObject({ relation: 'same-job' });
  });

  it('a step the cluster’s own runs show optional makes no other procedure, however unlike the goals', () => {
    const withMail = profile(
      { name: 'refund-order', toolSequence: steps('orders.get', 'payments.refund', 'orders.update', 'email.send') },
      goalAt(0.2),
    );
    const runs = [
      ['orders.get', 'payments.refund', 'orders.update'],
      ['orders.get', 'payments.refund', 'orders.update'],
      ['orders.get', 'payments.refund', 'orders.update', 'email.send'],
    ];
    expect(observedOptionalTools(runs)).toEqual(['email.send']);
    const withoutMail = cluster({ tools: runs[0]!, optionalTools: observedOptionalTools(runs) });
    expect(matchProcedure(withoutMail, [withMail], thresholds)).toMatchObject({ relation: 'same-procedure', optionalApart: true });
    // without that evidence the same two sequences for unlike goals stay apart
    expect(matchProcedure(cluster({ tools: runs[0]! }), [withMail], thresholds)).toBeUndefined();
    // an optional tool explains only itself: a core that differs is another procedure
    expect(
      sameUpToOptionalSteps(['orders.get', 'inventory.reserve', 'email.send'], ['orders.get', 'payments.refund'], ['email.send']),
    ).toBe(false);
    expect(sameUpToOptionalSteps(['email.send'], ['email.send', 'email.send'], ['email.send'])).toBe(false);
  });

  it('a step the procedure’s own record shows optional makes no other procedure either (a split cluster without the step)', () => {
    const withSlack = profile(
      { name: 'restart-service', toolSequence: steps('k8s.deployment.get', 'k8s.rollout.restart', 'k8s.rollout.status', 'notify.slack') },
      goalAt(0.2),
    );
    // the cluster's runs all skipped notify.slack: no evidence on its side
    const withoutSlack = cluster({ tools: ['k8s.deployment.get', 'k8s.rollout.restart', 'k8s.rollout.status'], optionalTools: [] });
    expect(matchProcedure(withoutSlack, [withSlack], thresholds)).toBeUndefined();
    // the runs the procedure counted show the step taken by some and skipped by others
    const recorded = { ...withSlack, optionalTools: ['notify.slack'] };
    expect(matchProcedure(withoutSlack, [recorded], thresholds)).toMatchObject({ relation: 'same-procedure', optionalApart: true });
    // the record explains only its optional tools: another core step is another procedure
    const otherCore = cluster({ tools: ['k8s.deployment.get', 'k8s.rollout.undo', 'k8s.rollout.status'], optionalTools: [] });
    expect(matchProcedure(otherCore, [recorded], thresholds)).toBeUndefined();
    // a repeat count is not an optional step: one and two details stay apart
    const twoDetails = profile({ name: 'two', toolSequence: steps('search', 'details', 'details') }, goalAt(0.2));
    expect(
      matchProcedure(cluster({ tools: ['search', 'details'], optionalTools: [] }), [{ ...twoDetails, optionalTools: [] }], thresholds),
    ).toBeUndefined();
  });

  it('the same steps in another order are the same procedure for the same kind of goal, another procedure for unlike goals', () => {
    const booked = profile({ name: 'cancel-room', toolSequence: steps('bookings.list', 'bookings.cancel', 'invite.cancel') }, goalAt(1));
    const swapped = cluster({ tools: ['bookings.cancel', 'bookings.list', 'invite.cancel'], optionalTools: [] });
    expect(sameStepsReordered(swapped.tools, ['bookings.list', 'bookings.cancel', 'invite.cancel'])).toBe(true);
    expect(matchProcedure(swapped, [booked], thresholds)).toMatchObject({ relation: 'same-procedure' });
    // unlike goals: a different procedure (it may do another job with the same tools)
    expect(matchProcedure(swapped, [{ ...booked, goalCentroid: goalAt(0.3) }], thresholds)).toBeUndefined();
    // a repeat count is not an order
    expect(sameStepsReordered(['a', 'b', 'b'], ['a', 'a', 'b'])).toBe(false);
    expect(sameStepsReordered(['a', 'b'], ['a', 'b', 'b'])).toBe(false);
  });

  it('the same steps in another order, apart from steps either side’s runs show optional, are the same procedure for the same kind of goal', () => {
    const summarise = profile({ name: 'summarise-pr', toolSequence: steps('pr.get', 'pr.diff', 'pr.comment') }, goalAt(0.9));
    // three runs that read the diff first and also listed the comments, which the procedure's record shows optional
    const swapped = cluster({ tools: ['pr.diff', 'pr.get', 'pr.comments.list', 'pr.comment'], optionalTools: [] });
    expect(matchProcedure(swapped, [summarise], thresholds)).toBeUndefined();
    const recorded = { ...summarise, optionalTools: ['pr.comments.list'] };
    expect(sameStepsReordered(swapped.tools, ['pr.get', 'pr.diff', 'pr.comment'], ['pr.comments.list'])).toBe(true);
    expect(matchProcedure(swapped, [recorded], thresholds)).toMatchObject({ relation: 'same-procedure' });
    expect(matchProcedure(swapped, [{ ...recorded, goalCentroid: goalAt(0.3) }], thresholds)).toBeUndefined();
    // an optional tool explains only itself: without it the rest must still be the same steps
    expect(sameStepsReordered(['a', 'x', 'b'], ['b', 'a', 'y'], ['x'])).toBe(false);
    expect(sameStepsReordered(['x'], ['x', 'x'], ['x'])).toBe(false);
  });

  it('the same kind of goal is judged against the procedure’s own spread of goals, not only the cosine of two centroids', () => {
    // A varied job: its goals are far apart, so the mean of its unit goal vectors is short (p·p = 0.16).
    const spread = Float32Array.from([0.4, 0, 0]);
    // Three paraphrases of it (their mean: |c| = 0.9): centroid cosine 0.40, under τ = 0.6 ...
    const paraphrases = Float32Array.from([0.36, Math.sqrt(0.81 - 0.36 * 0.36), 0]);
    expect(cosine(paraphrases, spread)).toBeCloseTo(0.4, 5);
    // ... yet as close to the job's goals as those are to each other, 90 %.
    expect(goalAffinity(paraphrases, spread)).toBeCloseTo(0.9, 5);
    const booking = profile({ name: 'book-room', toolSequence: steps('rooms.search', 'rooms.book', 'invite.send') }, spread);
    const reordered = cluster({ tools: ['rooms.book', 'rooms.search', 'invite.send'], optionalTools: [], goalCentroid: paraphrases });
    expect(matchProcedure(reordered, [booking], thresholds)).toMatchObject({ relation: 'same-procedure' });
    const oneMore = cluster({
      tools: ['rooms.search', 'rooms.book', 'notes.write', 'invite.send'],
      optionalTools: [],
      goalCentroid: paraphrases,
    });
    expect(matchProcedure(oneMore, [booking], thresholds)).toMatchObject({ relation: 'same-procedure' });
    // goals of another job, against the same spread: half as close as the job's own — another procedure
    const otherJob = Float32Array.from([0.2, Math.sqrt(0.81 - 0.04), 0]);
    expect(goalAffinity(otherJob, spread)).toBeCloseTo(0.5, 5);
    expect(matchProcedure({ ...reordered, goalCentroid: otherJob }, [booking], thresholds)).toBeUndefined();
  });

  it('how many times a call repeats is part of the procedure, unless either side’s runs show the number varies', () => {
    const twoHotels = ['hotels.search', 'hotel.policies', 'hotel.policies'];
    const threeHotels = [...twoHotels, 'hotel.policies'];
    // one more repetition is not an optional step; one step of another tool still is
    expect(oneStepApart(twoHotels, threeHotels)).toBe(false);
    expect(oneStepApart(twoHotels, [...twoHotels, 'hotel.reviews'])).toBe(true);
    const policies = profile({ name: 'compare-hotel-policies', toolSequence: steps(...twoHotels) }, goalAt(0.9));
    expect(
      matchProcedure(cluster({ tools: threeHotels, optionalTools: [] }), [{ ...policies, optionalTools: [] }], thresholds),
    ).toBeUndefined();
    // the cluster's runs looked up as many hotels as a search returned: two in some, three in others
    const loopRuns = [twoHotels, threeHotels, threeHotels];
    expect(observedOptionalTools(loopRuns)).toEqual(['hotel.policies']);
    // a call repeated equally often in every run is no evidence
    expect(observedOptionalTools([twoHotels, twoHotels])).toEqual([]);
    expect(
      matchProcedure(cluster({ tools: threeHotels, optionalTools: observedOptionalTools(loopRuns) }), [policies], thresholds),
    ).toMatchObject({ relation: 'same-procedure', optionalApart: true });
    // or the runs the procedure counted did
    expect(
      matchProcedure(cluster({ tools: threeHotels, optionalTools: [] }), [{ ...policies, optionalTools: ['hotel.policies'] }], thresholds),
    ).toMatchObject({ relation: 'same-procedure', optionalApart: true });
    // goals as alike as one job's: a differently sized job does not compete with it (no SUPERSEDE, no NOOP)
    const sameWording = { ...policies, goalCentroid: goalAt(0.99), optionalTools: [] };
    expect(matchProcedure(cluster({ tools: threeHotels, optionalTools: [] }), [sameWording], thresholds)).toBeUndefined();
    expect(
      toolsRepeatedDifferently([
        ['a', 'b', 'a', 'b'],
        ['a', 'b'],
      ]),
    ).toEqual(['a', 'b']);
    expect(
      toolsRepeatedDifferently([
        ['a', 'a', 'b'],
        ['a', 'b', 'b'],
      ]),
    ).toEqual(['a', 'b']);
    expect(toolsRepeatedDifferently([twoHotels, [...twoHotels, 'hotel.reviews']])).toBeNull();
    expect(toolsRepeatedDifferently([twoHotels, [...twoHotels].reverse()])).toBeNull();
    // another procedure for the same job still competes
    const otherWay = profile({ toolSequence: steps('hotels.search', 'hotel.rules', 'hotel.rules') }, goalAt(0.99));
    expect(matchProcedure(cluster({ tools: twoHotels, optionalTools: [] }), [otherWay], thresholds)).toMatchObject({
      relation: 'same-job',
    });
  });

  it('“one optional step apart” is one step: two added steps are another procedure, even at sequence similarity ≥ 0.8', () => {
    const flightTaxi = ['flight.location', 'flight.location', 'flights.search', 'taxi.location', 'taxi.location', 'taxi.search'];
    const withHotel = [
      'flight.location',
      'flight.location',
      'hotel.destination',
      'flights.search',
      'hotels.search',
      'taxi.location',
      'taxi.location',
      'taxi.search',
    ];
    expect(toolSequenceSimilarity(flightTaxi, withHotel)).toBeGreaterThanOrEqual(0.8);
    expect(oneStepApart(flightTaxi, withHotel)).toBe(false);
    const hotelTrip = profile({ name: 'hotel-trip', toolSequence: steps(...withHotel) }, goalAt(0.9));
    expect(matchProcedure(cluster({ tools: flightTaxi, optionalTools: [] }), [hotelTrip], thresholds)).toBeUndefined();
    const oneMore = [...flightTaxi.slice(0, 3), 'hotels.search', ...flightTaxi.slice(3)];
    expect(oneStepApart(flightTaxi, oneMore)).toBe(true);
    expect(oneStepApart(oneMore, flightTaxi)).toBe(true);
    expect(oneStepApart(['a', 'b', 'c'], ['a', 'b', 'c', 'd'])).toBe(true);
    expect(oneStepApart(['a', 'b', 'c'], ['x', 'b', 'c', 'd'])).toBe(false);
    expect(
      matchProcedure(
        cluster({ tools: flightTaxi, optionalTools: [] }),
        [{ ...hotelTrip, procedure: { ...hotelTrip.procedure, toolSequence: steps(...oneMore) } }],
        thresholds,
      ),
    ).toMatchObject({ relation: 'same-procedure' });
  });

  it('an ADD whose successful runs live procedures already learned from is a NOOP against the one that counts most', () => {
    const add = { action: 'add' as const, reason: 'new' };
    const known = procedure({ id: 'p1', name: 'known' });
    const learners = new Map([
      ['r1', [known]],
      ['r2', [known]],
      ['r3', [known]],
    ]);
    expect(settleAlreadyLearned(add, ['r1', 'r2', 'r3', 'r4'], learners, 3)).toMatchObject({
      action: 'noop',
      target: { id: 'p1' },
      reason: expect.stringMatching(/^only 1 of its 4 successful runs .* known counts 3/),
    });
    expect(settleAlreadyLearned(add, ['r1', 'r4', 'r5', 'r6'], learners, 3)).toBe(add);
    expect(settleAlreadyLearned(add, ['r7', 'r8'], learners, 3)).toBe(add);
  });

  it('a different tool sequence for goals that merely read alike is a different procedure: ADD, not absorbed', () => {
    const car = profile({ name: 'book-car-rental', toolSequence: steps('Search_Car_Location', 'Search_Car_Rentals') }, goalAt(0.8));
    const flight = cluster({ tools: ['Search_Flight_Location', 'Search_Flights', 'Get_Flight_Details'] });
    expect(matchProcedure(flight, [car], thresholds)).toBeUndefined();
  });

  it('prefers the live identical procedure over a superseded one', () => {
    const superseded = profile({ id: 'old', name: 'a-old', supersededBy: 'new' });
    const live = profile({ id: 'new', name: 'b-live' });
    expect(matchProcedure(cluster(), [superseded, live], thresholds)?.target.id).toBe('new');
  });

  it('supersedes a different procedure for the same job only when its lower confidence bound is higher', () => {
    const existing = profile({ toolSequence: steps('pkg.build', 'deploy.apply'), successCount: 5, attemptCount: 5 }, goalAt(0.97));
    const strong = cluster({ successCount: 17, attemptCount: 18 });
    const match = matchProcedure(strong, [existing], thresholds);
    expect(match).toMatchObject({ relation: 'same-job' });
    // 17/18 (bound 0.74) beats 5/5 (bound 0.57) although its raw rate is lower
    expect(decide(strong, match, 18)).toMatchObject({ action: 'supersede', weaker: { id: 'p1' } });
    const weak = cluster({ successCount: 3, attemptCount: 3 });
    expect(decide(weak, match, 3)).toMatchObject({
      action: 'noop',
      reason: expect.stringMatching(/weaker track record \(3\/3, lower bound 0\.44 vs 5\/5, lower bound 0\.57\)/),
    });
  });

  it('never lets a superseded procedure be the one a new procedure competes with', () => {
    const existing = profile({ toolSequence: steps('pkg.build', 'deploy.apply'), supersededBy: 'p9' }, goalAt(0.97));
    expect(matchProcedure(cluster(), [existing], thresholds)).toBeUndefined();
  });

  it('weighs evidence, not the raw rate: the Wilson lower bound', () => {
    expect(wilsonLowerBound({ successCount: 17, attemptCount: 18 })).toBeGreaterThan(
      wilsonLowerBound({ successCount: 5, attemptCount: 5 }),
    );
    expect(wilsonLowerBound({ successCount: 94, attemptCount: 107 })).toBeGreaterThan(
      wilsonLowerBound({ successCount: 9, attemptCount: 9 }),
    );
    expect(wilsonLowerBound({ successCount: 0, attemptCount: 0 })).toBe(0);
  });
});
