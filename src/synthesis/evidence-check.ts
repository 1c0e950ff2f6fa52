import type { ClusterEvidence } from './cluster-evidence.ts';
import { DistillOutputMalformed, type LearnedSkill } from './learned-skill.ts';

/**
 * An LLM's skill must describe what the cluster's runs did: every tool it requires or tells the
 * agent to call was used by those runs, and every `{parameter}` it refers to is one the runs
 * showed. A violation refuses the output, like malformed output: the cluster is skipped with
 * the reason, never installed with an invented step.
 */

/** Tools a step tells the agent to call: a code span right after call/invoke/use/run. */
const CALLED_TOOL = /\b(?:call|calls|calling|invoke|invokes|use|uses|run|runs)\s+`([^`\s{][^`\s]*)`/gi;
const PARAMETER_REFERENCE = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

export function checkAgainstEvidence(learned: Extract<LearnedSkill, { kind: 'skill' }>, evidence: ClusterEvidence): void {
  const used = new Set(evidence.toolsUsed);
  const named = [...learned.manifest.requiredTools, ...[...learned.body.matchAll(CALLED_TOOL)].map((match) => match[1]!)];
  const invented = [...new Set(named.filter((tool) => !used.has(tool)))];
  if (invented.length > 0) {
    throw new DistillOutputMalformed(`names tools the cluster's runs never used: ${invented.slice(0, 5).join(', ')}`);
  }
  const parameters = new Set(evidence.parameters.map((parameter) => parameter.name));
  const unknown = [...new Set([...learned.body.matchAll(PARAMETER_REFERENCE)].map((match) => match[1]!))].filter(
    (name) => !parameters.has(name),
  );
  if (unknown.length > 0) {
    throw new DistillOutputMalformed(
      `refers to parameters the runs did not show: ${unknown
        .slice(0, 5)
        .map((name) => `{${name}}`)
        .join(', ')}`,
    );
  }
}
