import { countTokens } from '../skills/token-count.ts';
import { BODY_TOKEN_LIMIT } from '../skills/validator.ts';
import type { ClusterEvidence, EvidenceStep, ObservedFailure } from './cluster-evidence.ts';
import type { ArgumentBinding, ProcedureParameter } from './parameter-induction.ts';

/**
 * The Markdown body of a learned skill: its track record, the goals it served, `## Parameters`
 * (meaning, examples, where each comes from), `## Steps` (numbered, each with its argument
 * bindings; optional steps say when they apply) and `## Edge cases` (what failed and what to
 * check). The figures are the procedure's track record, passed in — never recounted here. The
 * body always fits the validator's token budget: detail is dropped level by level until it does,
 * and the last level is bounded by construction (one step, one edge case, each of bounded length).
 */

export interface TrackRecordFigures {
  successCount: number;
  attemptCount: number;
}

interface Detail {
  goals: number;
  examples: number;
  literalCharacters: number;
  bindings: boolean;
  maxSteps: number;
  maxParameters: number;
  maxEdgeCases: number;
  /** Tools the line after the last shown step names (the rest are counted). */
  maxContinued: number;
  /** Parameters an edge case says to check. */
  maxChecks: number;
}

const FULL: Detail = {
  goals: 3,
  examples: 3,
  literalCharacters: 80,
  bindings: true,
  maxSteps: Infinity,
  maxParameters: Infinity,
  maxEdgeCases: 10,
  maxContinued: 20,
  maxChecks: Infinity,
};
const TERSE: Detail = { ...FULL, goals: 0, examples: 0, literalCharacters: 0, bindings: false, maxEdgeCases: 3 };
const DETAIL_LEVELS: Detail[] = [
  FULL,
  { ...FULL, goals: 1, examples: 1, literalCharacters: 40, maxEdgeCases: 5 },
  { ...FULL, goals: 0, examples: 0, literalCharacters: 20, maxEdgeCases: 3 },
  { ...TERSE, maxParameters: 60 },
  { ...TERSE, maxSteps: 25, maxParameters: 20, maxEdgeCases: 1 },
  { ...TERSE, maxSteps: 8, maxParameters: 5, maxEdgeCases: 1, maxContinued: 4, maxChecks: 3 },
  // A tool name of up to 128 characters can cost several tokens a character, so the last level is bounded whatever
  // the names, errors and goals are: the title, one step (its tool and at most three words of 40 characters), fixed lines.
  { ...TERSE, maxSteps: 1, maxParameters: 0, maxEdgeCases: 0, maxContinued: 0, maxChecks: 0 },
];

/** Inline text that cannot break out of its code span or its line. */
function inline(text: string, limit = Infinity): string {
  const flat = text.replace(/[\r\n\u2028\u2029\u0085]+/g, ' ').replace(/`/g, "'");
  return flat.length <= limit ? flat : `${flat.slice(0, Math.max(1, limit - 1))}…`;
}

const code = (text: string) => `\`${inline(text)}\``;

function sourceText(parameter: ProcedureParameter): string {
  switch (parameter.source.kind) {
    case 'goal':
      return 'taken from the goal';
    case 'step-result': {
      const { step, tool, field } = parameter.source;
      return field
        ? `the \`${inline(field)}\` returned by step ${step} (${code(tool)})`
        : `found in the result of step ${step} (${code(tool)})`;
    }
    case 'choice':
      return 'chosen to suit the goal (the runs did not quote it verbatim)';
  }
}

/** An argument some runs of its step left out: optional, and how often it was passed. */
function presenceText({ presence }: ArgumentBinding): string {
  return presence.in < presence.of ? ` (optional: in ${presence.in} of ${presence.of} runs)` : '';
}

function bindingText(binding: ArgumentBinding, detail: Detail): string {
  if (binding.kind === 'parameter') return `${code(binding.argument)} = \`{${binding.parameter}}\`${presenceText(binding)}`;
  const every =
    binding.presence.in < binding.presence.of ? 'the same value every run that passed it used' : 'the same value every run used';
  const literal = detail.literalCharacters > 0 ? ` = \`${inline(binding.value, detail.literalCharacters)}\`` : ` = (${every})`;
  return `${code(binding.argument)}${literal}${presenceText(binding)}`;
}

function stepLine(step: EvidenceStep, index: number, successfulRuns: number, detail: Detail): string {
  const call = `call ${code(step.tool)}`;
  const bindings =
    detail.bindings && step.bindings.length > 0 ? ` with ${step.bindings.map((binding) => bindingText(binding, detail)).join(', ')}` : '';
  if (!step.optional) return `${index + 1}. ${call.replace(/^c/, 'C')}${bindings}.`;
  const when =
    step.whenNeeded.length > 0
      ? `, when the goal mentions ${step.whenNeeded.map((word) => `"${inline(word, 40)}"`).join(' or ')}`
      : ', when the goal needs it';
  return `${index + 1}. Optional (${step.runs} of ${successfulRuns} runs${when}): ${call}${bindings}.`;
}

function header(evidence: ClusterEvidence, title: string, trackRecord: TrackRecordFigures, detail: Detail): string[] {
  const rate = Math.round((100 * trackRecord.successCount) / Math.max(1, trackRecord.attemptCount));
  const lines = [
    `# ${inline(title)}`,
    '',
    `Learned from ${trackRecord.successCount} successful runs (${rate}% of ${trackRecord.attemptCount} attempts).`,
  ];
  const goals = evidence.representativeGoals.slice(0, detail.goals);
  if (goals.length > 0) lines.push('Goals it served:', ...goals.map((goal) => `- ${inline(goal, 200)}`));
  return [...lines, ''];
}

function sections(evidence: ClusterEvidence, detail: Detail): string[] {
  const lines = ['## Parameters'];
  if (evidence.parameters.length === 0) lines.push('None: every run called the tools with the same arguments.');
  for (const parameter of evidence.parameters.slice(0, detail.maxParameters)) {
    const examples = parameter.examples.slice(0, detail.examples).map((example) => `\`${inline(example)}\``);
    lines.push(
      `- \`{${parameter.name}}\` — ${inline(parameter.meaning)}: ${sourceText(parameter)}.${examples.length ? ` Examples: ${examples.join(', ')}.` : ''}`,
    );
  }

  if (evidence.parameters.length > detail.maxParameters)
    lines.push(
      detail.maxParameters > 0
        ? `- … and ${evidence.parameters.length - detail.maxParameters} more, named in the steps' results and the goal.`
        : `- ${evidence.parameters.length}, too many to list here.`,
    );

  lines.push('', '## Steps');
  const shown = evidence.steps.slice(0, detail.maxSteps);
  shown.forEach((step, index) => lines.push(stepLine(step, index, evidence.successfulRunCount, detail)));
  if (shown.length < evidence.steps.length) {
    const rest = evidence.steps.slice(shown.length);
    const named = rest
      .slice(0, detail.maxContinued)
      .map((step) => `${code(step.tool)}`)
      .join(', ');
    const unnamed = rest.length - Math.min(rest.length, detail.maxContinued);
    lines.push(
      named.length > 0
        ? `${shown.length + 1}. Continue with ${named}${unnamed > 0 ? ` and ${unnamed} more steps` : ''}, in that order.`
        : `${shown.length + 1}. Continue with the other ${unnamed} steps, in the order the runs took them.`,
    );
  }

  lines.push('', '## Edge cases');
  // One line per failing tool: where it is, what it said, and the parameters to check.
  const byTool = new Map<string, ObservedFailure[]>();
  for (const failure of evidence.observedFailures) byTool.set(failure.tool, [...(byTool.get(failure.tool) ?? []), failure]);
  const edgeCases = [...byTool.values()].map((failures) => {
    const { tool, step: stepNumber } = failures[0]!;
    const step = stepNumber === null ? undefined : evidence.steps[stepNumber - 1];
    const checks = [
      ...new Set((step?.bindings ?? []).flatMap((binding) => (binding.kind === 'parameter' ? [`\`{${binding.parameter}}\``] : []))),
    ].slice(0, detail.maxChecks);
    const where = stepNumber === null ? code(tool) : `Step ${stepNumber} (${code(tool)})`;
    const errors = failures.map((failure) => `${inline(failure.error, 160)} (${failure.count}x)`).join('; ');
    return `- ${where} failed with: ${errors}. Check ${checks.length > 0 ? checks.join(', ') : 'its inputs'} before retrying.`;
  });
  if (evidence.steps.some((step) => step.optional)) {
    edgeCases.push('- Skip an optional step unless the goal calls for it; every other step ran in most successful runs.');
  }
  if (edgeCases.length === 0) edgeCases.push('- No failures were observed; stop and report if a step fails.');
  const shownCases = edgeCases.slice(0, detail.maxEdgeCases);
  lines.push(...(shownCases.length > 0 ? shownCases : ['- Stop and report if a step fails.']));
  return lines;
}

/** The first rendering, most detailed first, that fits the body's token budget. */
function fitted(renderAt: (detail: Detail) => string): string {
  let text = '';
  for (const detail of DETAIL_LEVELS) {
    text = renderAt(detail);
    if (countTokens(text) <= BODY_TOKEN_LIMIT) return text;
  }
  return text;
}

export function renderProcedureBody(evidence: ClusterEvidence, options: { title: string; trackRecord: TrackRecordFigures }): string {
  return fitted((detail) => [...header(evidence, options.title, options.trackRecord, detail), ...sections(evidence, detail)].join('\n'));
}

/** `## Parameters`, `## Steps` and `## Edge cases` alone: the procedure as the LLM distiller is shown it. */
export function renderProcedureSections(evidence: ClusterEvidence): string {
  return fitted((detail) => sections(evidence, detail).join('\n'));
}
