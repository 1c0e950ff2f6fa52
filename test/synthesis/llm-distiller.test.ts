import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChatClient } from '../../src/llm/chat-client.ts';
import { buildClusterEvidence, type EvidenceRun } from '../../src/synthesis/cluster-evidence.ts';
import { createLlmDistiller } from '../../src/synthesis/distiller.ts';
import { DistillOutputMalformed } from '../../src/synthesis/learned-skill.ts';
import { startScriptedLlm, type ScriptedLlm } from '../support/scripted-llm.ts';

const CITIES = [
  ['Aden', '-2092174'],
  ['Vienna', '-1995499'],
  ['Lisbon', '-2167973'],
] as const;

const runs: EvidenceRun[] = Array.from({ length: 6 }, (_, index) => {
  const [city, destId] = CITIES[index % CITIES.length]!;
  return {
    runId: `run-${index}`,
    goal: `find me a hotel in ${city} for next week`,
    status: 'completed',
    toolCalls: [
      { tool: 'Search_Hotel_Destination', args: { query: city }, success: true, resultSummary: JSON.stringify({ dest_id: destId }) },
      { tool: 'Search_Hotels', args: { dest_id: destId, search_type: 'CITY' }, success: true, resultSummary: 'three hotels' },
    ],
  };
});
const evidence = buildClusterEvidence(runs, 2);
const request = { trackRecord: { successCount: 6, attemptCount: 6 } };

const answer = (tools: string[], steps: string) => `---
name: search-hotels-in-a-city
when_to_use: Find hotels in a city the goal names, by resolving the city to a destination id first.
tools_required: [${tools.join(', ')}]
---
# Search hotels in a city

## Parameters
- \`{query}\` — the city named in the goal.
- \`{dest_id}\` — the destination id step 1 returns.

## Steps
${steps}

## Edge cases
- If step 1 finds no destination, ask which city was meant.
`;
const faithfulSteps =
  '1. Call `Search_Hotel_Destination` with `query` = `{query}`.\n2. Call `Search_Hotels` with `dest_id` = `{dest_id}`, `search_type` = `"CITY"`.';

describe('the LLM distiller, against a scripted model on loopback', () => {
  let llm: ScriptedLlm;
  beforeAll(async () => {
    llm = await startScriptedLlm(() => ({ content: 'SKIP' }));
  });
  afterAll(async () => {
    await llm.close();
  });
  const distiller = () =>
    createLlmDistiller(createChatClient({ baseUrl: llm.baseUrl, model: 'scripted', timeoutMs: 5_000 }), { license: 'MIT' });

  it('shows the model the parameterised procedure: parameters, bound steps and their sources', async () => {
    llm.setScript(() => ({ content: 'SKIP' }));
    await expect(distiller().distill(evidence, request)).resolves.toEqual({ kind: 'skip' });
    const prompt = llm.requests.at(-1)!.messages.find((message) => message.role === 'user')!.content;
    expect(prompt).toContain('`{dest_id}` — dest id: the `dest_id` returned by step 1 (`Search_Hotel_Destination`)');
    expect(prompt).toContain('2. Call `Search_Hotels` with `dest_id` = `{dest_id}`, `search_type` = `"CITY"`.');
    expect(prompt).toContain('Tools the runs used: Search_Hotel_Destination, Search_Hotels');
  });

  it("accepts an answer that uses only the cluster's tools and parameters", async () => {
    llm.setScript(() => ({ content: answer(['Search_Hotel_Destination', 'Search_Hotels'], faithfulSteps) }));
    const learned = await distiller().distill(evidence, request);
    expect(learned.kind).toBe('skill');
    if (learned.kind === 'skill') expect(learned.manifest.requiredTools).toEqual(['Search_Hotel_Destination', 'Search_Hotels']);
  });

  it('refuses an answer that invents a tool, in its required tools or in a step', async () => {
    llm.setScript(() => ({ content: answer(['Search_Hotel_Destination', 'Search_Hotels', 'Book_Hotel'], faithfulSteps) }));
    await expect(distiller().distill(evidence, request)).rejects.toThrow(DistillOutputMalformed);
    await expect(distiller().distill(evidence, request)).rejects.toThrow("names tools the cluster's runs never used: Book_Hotel");
    llm.setScript(() => ({
      content: answer(
        ['Search_Hotel_Destination', 'Search_Hotels'],
        `${faithfulSteps}\n3. Call \`Book_Hotel\` with \`hotel_id\` = \`{dest_id}\`.`,
      ),
    }));
    await expect(distiller().distill(evidence, request)).rejects.toThrow("names tools the cluster's runs never used: Book_Hotel");
  });

  it('refuses an answer that refers to a parameter the runs did not show', async () => {
    llm.setScript(() => ({
      content: answer(['Search_Hotel_Destination', 'Search_Hotels'], `${faithfulSteps.replace('{query}', '{city_name}')}`),
    }));
    await expect(distiller().distill(evidence, request)).rejects.toThrow('refers to parameters the runs did not show: {city_name}');
  });

  it('shortens a description too long for the 75-token metadata block to its leading whole sentences, never a cut word', async () => {
    const long = answer(['Search_Hotel_Destination', 'Search_Hotels'], faithfulSteps).replace(
      /^when_to_use: .*$/m,
      `when_to_use: ${'Find hotels in the city the goal names by resolving it first. '.repeat(8).trim()}`,
    );
    llm.setScript(() => ({ content: long }));
    const learned = await distiller().distill(evidence, request);
    if (learned.kind !== 'skill') throw new Error('expected a skill');
    expect(learned.manifest.description).toMatch(/^(?:Find hotels in the city the goal names by resolving it first\. ?)+$/);
    expect(learned.manifest.description).not.toContain('…');
  });

  it('refuses as malformed, by the metadata rule, a description whose first sentence does not fit', async () => {
    const long = answer(['Search_Hotel_Destination', 'Search_Hotels'], faithfulSteps).replace(
      /^when_to_use: .*$/m,
      `when_to_use: Find ${'hotels resorts inns '.repeat(20).trim()} in the city the goal names.`,
    );
    llm.setScript(() => ({ content: long }));
    await expect(distiller().distill(evidence, request)).rejects.toThrow(/SkillMetadataTooLong/);
  });
});
