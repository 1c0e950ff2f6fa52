import { describe, expect, it } from 'vitest';
import { buildClusterEvidence, type EvidenceRun, type EvidenceToolCall } from '../../src/synthesis/cluster-evidence.ts';
import { createExtractiveDistiller } from '../../src/synthesis/distiller.ts';

/** A hotel-search family: the destination id flows from step 1's result into step 2. */
const CITIES = [
  { city: 'Aden', destId: '-2092174', guest: 'Maria' },
  { city: 'Vienna', destId: '-1995499', guest: 'Tom' },
  { city: 'Lisbon', destId: '-2167973', guest: 'Ana' },
  { city: 'Osaka', destId: '-240905', guest: 'Kenji' },
];

function hotelRun(index: number, options: { retry?: boolean; reviews?: boolean } = {}): EvidenceRun {
  const { city, destId, guest } = CITIES[index % CITIES.length]!;
  const checkin = `2024-0${(index % 9) + 1}-1${index % 10}`;
  const calls: EvidenceToolCall[] = [
    {
      tool: 'Search_Hotel_Destination',
      args: { query: city },
      success: true,
      resultSummary: JSON.stringify({ data: [{ dest_id: destId, search_type: 'CITY', name: city }] }),
    },
  ];
  if (options.retry)
    calls.push({
      tool: 'Search_Hotels',
      args: { dest_id: destId, search_type: 'CITY', arrival_date: checkin },
      success: false,
      error: 'HTTP 429 rate limited',
    });
  calls.push({
    tool: 'Search_Hotels',
    args: { dest_id: destId, search_type: 'CITY', arrival_date: checkin },
    success: true,
    resultSummary: `{"hotels": [{"hotel_id": ${1000 + index}}]}`,
  });
  if (options.reviews) calls.push({ tool: 'Get_Hotel_Reviews', args: { hotel_id: 1000 + index }, success: true, resultSummary: 'ok' });
  return {
    runId: `run-${String(index).padStart(3, '0')}`,
    goal: options.reviews
      ? `${guest} is going to stay in ${city} from ${checkin}; find a hotel and read its reviews`
      : `${guest} is going to stay in ${city} from ${checkin}, find a hotel there`,
    status: 'completed',
    toolCalls: calls,
  };
}

const cluster = () => Array.from({ length: 12 }, (_, index) => hotelRun(index, { retry: index % 4 === 1, reviews: index % 3 === 0 }));

describe('parameter induction from a cluster of runs', () => {
  it('keeps values constant across runs literal and turns varying values into named parameters', () => {
    const evidence = buildClusterEvidence(cluster(), 2);
    const searchHotels = evidence.steps.find((step) => step.tool === 'Search_Hotels')!;
    expect(searchHotels.bindings).toContainEqual(expect.objectContaining({ argument: 'search_type', kind: 'constant', value: '"CITY"' }));
    expect(searchHotels.bindings).toContainEqual(
      expect.objectContaining({ argument: 'arrival_date', kind: 'parameter', parameter: 'arrival_date' }),
    );
    expect(evidence.parameters.map((parameter) => parameter.name).sort()).toEqual(['arrival_date', 'dest_id', 'hotel_id', 'query']);
    const arrival = evidence.parameters.find((parameter) => parameter.name === 'arrival_date')!;
    expect(arrival.meaning).toBe('arrival date');
    expect(arrival.examples.length).toBeGreaterThan(1);
  });

  it('says a value written in the goal comes from the goal', () => {
    const evidence = buildClusterEvidence(cluster(), 2);
    expect(evidence.parameters.find((parameter) => parameter.name === 'query')!.source).toEqual({ kind: 'goal' });
    expect(evidence.parameters.find((parameter) => parameter.name === 'arrival_date')!.source).toEqual({ kind: 'goal' });
  });

  it("says a value found in an earlier step's result flows from that step, naming the field", () => {
    const evidence = buildClusterEvidence(cluster(), 2);
    expect(evidence.parameters.find((parameter) => parameter.name === 'dest_id')!.source).toEqual({
      kind: 'step-result',
      step: 1,
      tool: 'Search_Hotel_Destination',
      field: 'dest_id',
    });
    expect(evidence.parameters.find((parameter) => parameter.name === 'hotel_id')!.source).toMatchObject({
      kind: 'step-result',
      step: 2,
      field: 'hotel_id',
    });
  });

  it('keeps the consensus through retried calls and optional steps', () => {
    const evidence = buildClusterEvidence(cluster(), 2);
    expect(evidence.consensusSequence.map((step) => step.tool)).toEqual(['Search_Hotel_Destination', 'Search_Hotels']);
    const reviews = evidence.steps.find((step) => step.tool === 'Get_Hotel_Reviews')!;
    expect(reviews).toMatchObject({ optional: true, runs: 4 });
    expect(reviews.whenNeeded).toContain('review');
    expect(evidence.observedFailures).toEqual([{ tool: 'Search_Hotels', error: 'HTTP 429 rate limited', count: 3, step: 2 }]);
  });

  it('writes the parameters, the bound steps and what to check into the body, with the track record it is given', async () => {
    const evidence = buildClusterEvidence(cluster(), 2);
    const learned = await createExtractiveDistiller({ license: 'MIT' }).distill(evidence, {
      trackRecord: { successCount: 12, attemptCount: 15 },
    });
    if (learned.kind !== 'skill') throw new Error('expected a skill');
    expect(learned.body).toContain('Learned from 12 successful runs (80% of 15 attempts).');
    expect(learned.body).toContain('- `{dest_id}` — dest id: the `dest_id` returned by step 1 (`Search_Hotel_Destination`).');
    expect(learned.body).toContain(
      '2. Call `Search_Hotels` with `arrival_date` = `{arrival_date}`, `dest_id` = `{dest_id}`, `search_type` = `"CITY"`.',
    );
    expect(learned.body).toMatch(
      /^3\. Optional \(4 of 12 runs, when the goal mentions "read" or "review"\): call `Get_Hotel_Reviews` with `hotel_id` = `\{hotel_id\}`\.$/m,
    );
    expect(learned.body).toContain(
      '- Step 2 (`Search_Hotels`) failed with: HTTP 429 rate limited (3x). Check `{arrival_date}`, `{dest_id}` before retrying.',
    );
  });

  it('names the skill from its steps, never from a guest, a city or a date', async () => {
    const evidence = buildClusterEvidence(cluster(), 2);
    const learned = await createExtractiveDistiller({ license: 'MIT' }).distill(evidence, {
      trackRecord: { successCount: 12, attemptCount: 12 },
    });
    if (learned.kind !== 'skill') throw new Error('expected a skill');
    // A verb phrase of the task: the goal's clause that asks for something.
    expect(learned.manifest.name).toBe('find-hotel');
    for (const slot of ['aden', 'vienna', 'maria', 'tom', '2024']) {
      expect(learned.manifest.name).not.toContain(slot);
      expect(learned.manifest.description.toLowerCase()).not.toContain(slot);
    }
    // The typical goal in general terms, and what a goal must give: no placeholder, no ellipsis, no tool words.
    expect(learned.manifest.description).toBe(
      'For goals like "Is going to stay in a query from an arrival date, find a hotel there." Use when the goal gives the query and arrival date.',
    );
  });

  it('marks an argument only some runs passed optional, with how often it appears, instead of a fixed value', async () => {
    // Nine refunds; two pass a note (the same one), three a varying coupon: neither is part of every run.
    const runs: EvidenceRun[] = Array.from({ length: 9 }, (_, index) => ({
      runId: `refund-${index}`,
      goal: `Refund order A-10${index}`,
      status: 'completed',
      toolCalls: [
        { tool: 'orders.get', args: { orderId: `A-10${index}` }, success: true },
        {
          tool: 'payments.refund',
          args: {
            orderId: `A-10${index}`,
            ...(index < 2 ? { note: 'goodwill' } : {}),
            ...(index >= 6 ? { coupon: `C${index}` } : {}),
          },
          success: true,
        },
        { tool: 'email.send', args: { template: 'refund-receipt' }, success: true },
      ],
    }));
    const evidence = buildClusterEvidence(runs, 2);
    const learned = await createExtractiveDistiller({ license: 'MIT' }).distill(evidence, {
      trackRecord: { successCount: 9, attemptCount: 9 },
    });
    if (learned.kind !== 'skill') throw new Error('expected a skill');
    expect(learned.body).toContain('`note` = `"goodwill"` (optional: in 2 of 9 runs)');
    expect(learned.body).toContain('`coupon` = `{coupon}` (optional: in 3 of 9 runs)');
    // An argument every run passed is not marked.
    expect(learned.body).toMatch(/`template` = `"refund-receipt"`\./);
  });

  it('lists a failed run whose calls all succeeded as an edge case at the step where it stopped', () => {
    const runs = cluster();
    runs.push({ ...hotelRun(20), runId: 'run-stopped', status: 'failed', toolCalls: hotelRun(20).toolCalls.slice(0, 1) });
    const evidence = buildClusterEvidence(runs, 2);
    expect(evidence.observedFailures).toContainEqual({
      tool: 'Search_Hotel_Destination',
      error: 'the run ended failed after this call, with no tool error',
      count: 1,
      step: 1,
    });
  });

  it('gives the same evidence for the same runs in any order', () => {
    const runs = cluster();
    expect(buildClusterEvidence([...runs].reverse(), 2)).toEqual(buildClusterEvidence(runs, 2));
  });
});
