import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkAgentSkillsDocument } from '../../src/skills/agentskills-rules.ts';
import { parseSkillDocument, type SkillManifest } from '../../src/skills/skill-format.ts';
import { validateBody, validateManifest } from '../../src/skills/validator.ts';
import { buildClusterEvidence, type EvidenceRun, type EvidenceToolCall } from '../../src/synthesis/cluster-evidence.ts';
import { createExtractiveDistiller } from '../../src/synthesis/distiller.ts';
import { isStopWord, stem, toolWords, wordsOf } from '../../src/synthesis/goal-words.ts';
import { generateRuns } from '../../src/demo/synthetic-runs.ts';
import { DistillOutputMalformed, parseLearnedSkill } from '../../src/synthesis/learned-skill.ts';
import { withIdentity } from '../../src/synthesis/skill-naming.ts';
import { SkillValidationError } from '../../src/skills/validation-errors.ts';

/**
 * Generated clusters: a procedure of tools named in several conventions, goals written from
 * paraphrase words around slot values (people, places, ids, dates, amounts) that the runs also
 * pass as arguments, with optional steps, retries and failures.
 */

const VERBS = ['search', 'get', 'list', 'create', 'update', 'send', 'fetch', 'book', 'check', 'cancel'];
const OBJECTS = ['hotel', 'flight', 'order', 'invoice', 'ticket', 'user', 'report', 'car', 'room', 'payment'];
const GOAL_WORDS = ['please', 'arrange', 'the', 'trip', 'for', 'handle', 'request', 'need', 'quickly', 'organise', 'task'];
const vocabulary = new Set([...VERBS, ...OBJECTS, ...GOAL_WORDS].flatMap((word) => [word, `${word}s`]));

const toolName = fc
  .record({
    verb: fc.constantFrom(...VERBS),
    objects: fc.array(fc.constantFrom(...OBJECTS), { minLength: 1, maxLength: 3 }),
    style: fc.constantFrom('snake', 'camel', 'dotted'),
  })
  .map(({ verb, objects, style }) => {
    const capital = (word: string) => word[0]!.toUpperCase() + word.slice(1);
    if (style === 'snake') return [verb, ...objects].map(capital).join('_');
    if (style === 'camel') return verb + objects.map(capital).join('');
    return `${objects.join('.')}.${verb}`;
  });

const slotValue = fc
  .oneof(
    fc.stringMatching(/^[A-Z][a-z]{3,9}( [A-Z][a-z]{3,9})?$/), // a person or a place
    fc.stringMatching(/^[0-9a-f]{6,12}$/), // an id
    fc
      .date({ min: new Date('2000-01-01'), max: new Date('2030-12-31'), noInvalidDate: true })
      .map((date) => date.toISOString().slice(0, 10)),
    fc.integer({ min: 1, max: 99_999 }).map((amount) => `${amount}.00`),
  )
  .filter((value) => !(value.toLowerCase().match(/[a-z0-9]+/g) ?? []).some((word) => vocabulary.has(word) || isStopWord(word)));

const cluster = fc
  .record({
    tools: fc.uniqueArray(toolName, { minLength: 1, maxLength: 12 }),
    argumentNames: fc.array(fc.stringMatching(/^[a-z][a-zA-Z_]{0,20}$/), { minLength: 1, maxLength: 4 }),
    runs: fc.array(
      fc.record({
        slots: fc.array(slotValue, { minLength: 1, maxLength: 4 }),
        phrasing: fc.array(fc.constantFrom(...GOAL_WORDS), { minLength: 1, maxLength: 8 }),
        skip: fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
        retry: fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
        failed: fc.boolean(),
      }),
      { minLength: 2, maxLength: 12 },
    ),
  })
  .map(({ tools, argumentNames, runs }) => {
    const slotsUsed = new Set<string>();
    const evidenceRuns: EvidenceRun[] = runs.map((run, index) => {
      for (const slot of run.slots) slotsUsed.add(slot);
      const calls: EvidenceToolCall[] = [];
      tools.forEach((tool, step) => {
        // The first step always runs; the others are optional in some runs.
        if (step > 0 && run.skip[step] && index % 2 === 0) return;
        const args = Object.fromEntries(argumentNames.map((name, position) => [name, run.slots[(step + position) % run.slots.length]!]));
        if (run.retry[step]) calls.push({ tool, args, success: false, error: `upstream refused ${run.slots[0]}` });
        calls.push({ tool, args, success: true, resultSummary: JSON.stringify({ id: run.slots.at(-1), ok: true }) });
      });
      const goal = [
        run.phrasing[0]!,
        ...run.slots.map((slot, position) => `${slot} ${run.phrasing[(position + 1) % run.phrasing.length]}`),
      ].join(' ');
      return { runId: `r${String(index).padStart(3, '0')}`, goal, status: run.failed ? 'failed' : 'completed', toolCalls: calls };
    });
    return { runs: evidenceRuns, slotWords: new Set([...slotsUsed].flatMap((slot) => slot.toLowerCase().match(/[a-z0-9]+/g) ?? [])) };
  });

/** The distiller's answer, or the validator's refusal of a procedure whose fields cannot make a valid skill. */
const distill = async (runs: EvidenceRun[]) => {
  const evidence = buildClusterEvidence(runs, 1);
  try {
    return await createExtractiveDistiller({ license: 'Apache-2.0' }).distill(evidence, {
      trackRecord: { successCount: evidence.successfulRunCount, attemptCount: runs.length },
    });
  } catch (error) {
    if (error instanceof SkillValidationError) return { kind: 'refused' as const, error };
    throw error;
  }
};

function expectValid(document: string, name: string): void {
  const parsed = parseSkillDocument(document, { defaultLicense: 'Apache-2.0' });
  expect(() => validateManifest(parsed.manifest, name)).not.toThrow();
  expect(() => validateBody(parsed.body)).not.toThrow();
  expect(checkAgentSkillsDocument(document, name)).toEqual([]);
}

describe('what a learned skill says, over generated clusters', () => {
  it('never names or describes a skill with a slot value', async () => {
    let skills = 0;
    await fc.assert(
      fc.asyncProperty(cluster, async ({ runs, slotWords }) => {
        const learned = await distill(runs);
        if (learned.kind !== 'skill') return;
        skills += 1;
        for (const word of learned.manifest.name.split('-')) expect(slotWords.has(word)).toBe(false);
        for (const word of learned.manifest.description.toLowerCase().match(/[a-z0-9]+/g) ?? []) expect(slotWords.has(word)).toBe(false);
        // No fragment or placeholder either: the description is plain words.
        expect(learned.manifest.description).not.toMatch(/…|[{}]/);
      }),
      { numRuns: 100, seed: 4711 },
    );
    expect(skills).toBeGreaterThan(80);
  });

  it('never writes an extractive skill the validator refuses', async () => {
    const longTool = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_]{60,127}$/);
    const hostile = fc.record({
      tools: fc.uniqueArray(fc.oneof(toolName, longTool), { minLength: 1, maxLength: 14 }),
      goal: fc.string({ maxLength: 2000 }),
      value: fc.oneof(fc.string({ maxLength: 3000 }), fc.object()),
      runs: fc.integer({ min: 2, max: 6 }),
      steps: fc.integer({ min: 1, max: 60 }),
    });
    await fc.assert(
      fc.asyncProperty(hostile, async ({ tools, goal, value, runs, steps }) => {
        const evidenceRuns: EvidenceRun[] = Array.from({ length: runs }, (_, index) => ({
          runId: `r${index}`,
          goal: `${goal} ${index}`,
          status: 'completed',
          toolCalls: Array.from({ length: steps }, (_, step) => ({
            tool: tools[step % tools.length]!,
            args: { [`${goal.slice(0, 30)}_${step}`]: value, n: `${index}-${step}` },
            success: true,
            resultSummary: `${goal.slice(0, 100)} ${index}`,
          })),
        }));
        const learned = await distill(evidenceRuns);
        if (learned.kind === 'skill') expectValid(learned.document, learned.manifest.name);
      }),
      // Case 58 of this seed was a 42-step procedure of long tool names whose body came to 3,013 tokens.
      { numRuns: 60, seed: 1234 },
    );
    await fc.assert(
      fc.asyncProperty(cluster, async ({ runs }) => {
        const learned = await distill(runs);
        if (learned.kind === 'skill') expectValid(learned.document, learned.manifest.name);
      }),
      { numRuns: 50, seed: 99 },
    );
  });

  it('keeps the metadata block within budget under the name and version a skill is installed with (`-2`, a next version)', async () => {
    let lengthened = 0;
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(cluster, fc.integer({ min: 2, max: 999 }), fc.integer({ min: 1, max: 999 }), async ({ runs }, suffix, minor) => {
        const learned = await distill(runs);
        if (learned.kind !== 'skill') return;
        const tail = `-${suffix}`;
        const name = `${learned.manifest.name.slice(0, 64 - tail.length).replace(/-+$/, '')}${tail}`;
        const installed = withIdentity(learned.manifest, { name, version: `1.${minor}.0` });
        if (installed.description !== learned.manifest.description) lengthened += 1;
        expect(installed).toMatchObject({ name, version: `1.${minor}.0`, requiredTools: learned.manifest.requiredTools });
        // Fitted by its description, or (no description fits beside the longer name and every tool) refused by the rule.
        try {
          validateManifest(installed, name);
        } catch (error) {
          expect((error as SkillValidationError).rule).toBe('metadata.tokens');
          refused += 1;
        }
      }),
      { numRuns: 60, seed: 77 },
    );
    // the property met manifests that had to be cut again, not only ones with room to spare
    expect(lengthened).toBeGreaterThan(0);
    expect(refused).toBeLessThan(lengthened);
  });

  it('lists every tool of the procedure in required-tools, or refuses the cluster by the validator’s rule', async () => {
    const rules = new Set<string>();
    let skills = 0;
    await fc.assert(
      fc.asyncProperty(cluster, async ({ runs }) => {
        const learned = await distill(runs);
        const tools = [...new Set(buildClusterEvidence(runs, 1).consensusSequence.map((step) => step.tool))];
        if (learned.kind === 'refused') {
          rules.add(learned.error.rule);
          expect(['metadata.tokens', 'required_tools.count']).toContain(learned.error.rule);
          return;
        }
        if (learned.kind !== 'skill') return;
        skills += 1;
        expect(learned.manifest.requiredTools).toEqual(tools);
        expect(parseSkillDocument(learned.document, { defaultLicense: 'MIT' }).manifest.requiredTools).toEqual(tools);
      }),
      { numRuns: 100, seed: 2029 },
    );
    expect(skills).toBeGreaterThan(50);
    expect(rules.size).toBeGreaterThan(0);
  });

  it('never lets LLM output through that the validator refuses: it is fitted or refused as malformed', () => {
    const answer = fc.record({
      name: fc.oneof(fc.stringMatching(/^[a-z]{1,20}(-[a-z0-9]{1,20}){0,4}$/), fc.string({ maxLength: 80 })),
      whenToUse: fc.oneof(fc.string({ maxLength: 900 }), fc.lorem({ maxCount: 120 })),
      tools: fc.array(fc.oneof(toolName, fc.stringMatching(/^[A-Za-z][A-Za-z0-9_]{20,127}$/)), { maxLength: 12 }),
      body: fc.oneof(fc.lorem({ maxCount: 400 }), fc.string({ maxLength: 500 })),
    });
    let accepted = 0;
    fc.assert(
      fc.property(answer, ({ name, whenToUse, tools, body }) => {
        const output = `---\nname: ${JSON.stringify(name)}\nwhen_to_use: ${JSON.stringify(whenToUse)}\ntools_required: ${JSON.stringify(tools)}\n---\n# Title\n\n1. ${body}\n\n## Edge cases\n- none\n`;
        let learned;
        try {
          learned = parseLearnedSkill(output, { license: 'MIT' });
        } catch (error) {
          expect(error).toBeInstanceOf(DistillOutputMalformed);
          return;
        }
        if (learned.kind === 'skill') expectValid(learned.document, learned.manifest.name);
        accepted += 1;
      }),
      { numRuns: 300, seed: 42 },
    );
    expect(accepted).toBeGreaterThan(30);
  });
});

describe('descriptions and names an agent can choose by, over the seeded generator’s clusters', () => {
  /** The extractive skill of every family of both catalogs, two seeds each (distilled once for both tests). */
  const skills: SkillManifest[] = [];
  /** Each skill's name → the goals of the runs it was learned from. */
  const goalsOf = new Map<string, string[]>();
  beforeAll(async () => {
    for (const catalog of ['classic', 'varied'] as const) {
      for (const seed of [1, 2]) {
        const byFamily = new Map<string, EvidenceRun[]>();
        for (const { family, report } of generateRuns({ seed, runs: 300, catalog })) {
          if (family === null) continue;
          const run = { runId: report.runId, goal: report.goal, status: report.status, toolCalls: report.toolCalls };
          byFamily.set(family, [...(byFamily.get(family) ?? []), run]);
        }
        for (const runs of byFamily.values()) {
          const learned = await distill(runs);
          if (learned.kind !== 'skill') continue;
          skills.push(learned.manifest);
          goalsOf.set(
            learned.manifest.name,
            runs.map((run) => run.goal),
          );
        }
      }
    }
  });

  it('describes every skill in plain words: no "…" fragment, no {placeholder}, no tool name or chain of tool words', () => {
    expect(skills.length).toBeGreaterThan(20);
    for (const { description, requiredTools } of skills) {
      expect(description).not.toMatch(/…|\.\.\.|[{}]/);
      expect(description).not.toMatch(/, then /);
      for (const tool of requiredTools) expect(description).not.toContain(tool);
      expect(description).toMatch(/^["A-Z].*[.?"]$/);
    }
  });

  it('names every skill with a short verb phrase of its task, not a list of its tools’ words', () => {
    for (const { name, requiredTools } of skills) {
      const words = name.split('-');
      expect(words.length).toBeLessThanOrEqual(4);
      // A name all of tool words, drawn from more than one tool, is a list of tool words, not a task —
      // unless the goals say every one of those words: then it is the task in the words tools and goals agree on.
      const toolStems = (tool: string) => toolWords(tool).map(stem);
      const fromTools = words.every((word) => requiredTools.some((tool) => toolStems(tool).includes(word)));
      const toolsNamed = requiredTools.filter((tool) => words.slice(1).some((word) => toolStems(tool).includes(word)));
      const goalStems = new Set((goalsOf.get(name) ?? []).flatMap((goal) => wordsOf(goal).map(stem)));
      const saidByGoals = words.every((word) => goalStems.has(word));
      expect(fromTools && toolsNamed.length > 1 && !saidByGoals, `${name} lists tool words`).toBe(false);
    }
  });
});
