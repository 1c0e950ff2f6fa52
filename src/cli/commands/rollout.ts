import type { Command } from 'commander';
import { combinationSchema, type Combination } from '../../rollout/paired-evidence.ts';
import { formatJsonlLineError } from '../../input/jsonl-lines.ts';
import type { RolloutCheckDocument, RolloutGate } from '../../rollout/rollout-gate.ts';
import type { RolloutOverride } from '../../rollout/activation.ts';
import type { CliContext } from '../context.ts';

/**
 * `skillsmith rollout record --file PAIRS.jsonl | check | show | override` — the 002 spec's
 * paired-evaluation release gate (README "Rollout gate"). JSON shapes (with --json):
 * record → { file, lines, samples, valid, invalid, inserted, unchanged, errors: [{ line, path, reason, value? }] };
 * check → { n, b, c, improvement, interval: { lower, upper }, policyRegression, passed, reasons, policyFailures, tenantId, combination };
 * show → RolloutShow; override → the recorded decision.
 */
interface GlobalOptions {
  tenant: string;
  json: boolean;
}

interface CombinationOptions {
  modelPolicy?: string;
  policyProfile?: string;
  authoringVersion?: string;
}

/** The combination named by the options, each part defaulting to the one this deployment runs. */
function combinationFrom(options: CombinationOptions, current: Combination): Combination {
  return combinationSchema.parse({
    modelPolicy: options.modelPolicy ?? current.modelPolicy,
    policyProfile: options.policyProfile ?? current.policyProfile,
    authoringVersion: options.authoringVersion ?? current.authoringVersion,
  });
}

const points = (fraction: number): string => `${(fraction * 100).toFixed(1)}`;
const describeCombination = (combination: Combination): string =>
  `model policy ${combination.modelPolicy}, policy profile ${combination.policyProfile}, authoring version ${combination.authoringVersion}`;

function describeCheck(check: RolloutCheckDocument): string {
  return [
    `${check.passed ? 'PASSED' : 'NOT PASSED'}: tenant ${check.tenantId}, ${describeCombination(check.combination)}`,
    `n ${check.n}, authored only (b) ${check.b}, baseline only (c) ${check.c}; improvement ${points(check.improvement)} points, ` +
      `95 % paired interval [${points(check.interval.lower)}, ${points(check.interval.upper)}] points; ` +
      `policy regression: ${check.policyRegression ? `yes (${check.policyFailures.regressedCases} cases)` : 'no'}`,
    ...check.reasons.map((reason) => `- ${reason}`),
  ].join('\n');
}

const describeOverride = (decision: RolloutOverride): string =>
  `${decision.decidedAt.toISOString()}  ${decision.action} by ${decision.decidedBy} (${describeCombination(decision.combination)}): ${decision.reason}`;

function withCombinationOptions(command: Command): Command {
  return command
    .option('--model-policy <policy>', 'model policy (default: SKILLSMITH_MODEL_POLICY, else the LLM model)')
    .option('--policy-profile <profile>', 'policy profile (default: SKILLSMITH_APPROVAL_PROFILE)')
    .option('--authoring-version <version>', "authoring implementation version (default: this build's)");
}

export function registerRolloutCommands(program: Command, context: CliContext): void {
  const rollout = program
    .command('rollout')
    .description('the paired-evaluation release gate that activates authoring and review per tenant');
  const gate = async (): Promise<RolloutGate> => (await context.services()).rollout;

  rollout
    .command('record')
    .description('record paired evaluation samples from a JSONL file (one case a line); all or nothing')
    .requiredOption('--file <pairs.jsonl>', 'the pairs file')
    .action(async (options: { file: string }, command: Command) => {
      const { tenant, json } = command.optsWithGlobals<GlobalOptions>();
      // A file that cannot be read is said before any database is opened.
      await (await import('../../input/input-file.ts')).requireReadableFile(options.file);
      const result = await (await gate()).recordFile(tenant, options.file);
      if (!json) for (const error of result.errors) process.stderr.write(`${formatJsonlLineError(error)}\n`);
      context.output.result(json, result, () =>
        result.invalid > 0
          ? `${result.file}: ${result.invalid} of ${result.samples} samples invalid; nothing recorded`
          : `${result.file}: ${result.inserted} samples recorded, ${result.unchanged} unchanged (tenant ${tenant})`,
      );
      if (result.invalid > 0) process.exitCode = 1;
    });

  withCombinationOptions(rollout.command('check'))
    .description('compute n, b, c, the paired improvement and interval, and the verdict for one combination')
    .action(async (options: CombinationOptions, command: Command) => {
      const { tenant, json } = command.optsWithGlobals<GlobalOptions>();
      const rolloutGate = await gate();
      const check = await rolloutGate.check(tenant, combinationFrom(options, rolloutGate.combination));
      context.output.result(json, check, () => describeCheck(check));
    });

  rollout
    .command('show')
    .description("the tenant's activation: current combination, capability, evidence, overrides")
    .action(async (_options: unknown, command: Command) => {
      const { tenant, json } = command.optsWithGlobals<GlobalOptions>();
      const shown = await (await gate()).show(tenant);
      context.output.result(json, shown, () =>
        [
          `tenant ${tenant}: ${shown.active ? `ACTIVE (by ${shown.basis})` : 'NOT ACTIVE'}; authoring ${shown.authoring ? 'on' : 'off'}, review ${shown.review ? 'on' : 'off'}` +
            ` (platform switches: authoring ${shown.capability.authoring ? 'on' : 'off'}, review ${shown.capability.review ? 'on' : 'off'})`,
          `current combination: ${describeCombination(shown.combination)}`,
          describeCheck(shown.check),
          shown.override ? `override in force: ${describeOverride(shown.override)}` : 'no override in force',
          ...(shown.evidence.length > 0
            ? [
                'evidence recorded:',
                ...shown.evidence.map(
                  (entry) => `  ${entry.n} pairs: ${describeCombination(entry.combination)}${entry.current ? ' (current)' : ''}`,
                ),
              ]
            : []),
          ...(shown.overrides.length > 0
            ? ['override decisions:', ...shown.overrides.map((decision) => `  ${describeOverride(decision)}`)]
            : []),
        ].join('\n'),
      );
    });

  withCombinationOptions(rollout.command('override'))
    .description('activate the tenant without passing evidence (or --revoke that), recording who and why')
    .requiredOption('--by <who>', 'who decides')
    .requiredOption('--reason <why>', 'why')
    .option('--revoke', 'withdraw an earlier override', false)
    .action(async (options: CombinationOptions & { by: string; reason: string; revoke: boolean }, command: Command) => {
      const { tenant, json } = command.optsWithGlobals<GlobalOptions>();
      const rolloutGate = await gate();
      const decision = await rolloutGate.override(tenant, {
        action: options.revoke ? 'revoke' : 'grant',
        decidedBy: options.by,
        reason: options.reason,
        combination: combinationFrom(options, rolloutGate.combination),
      });
      context.output.result(json, decision, () => `recorded for tenant ${tenant}: ${describeOverride(decision)}`);
    });
}
