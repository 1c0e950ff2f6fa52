import type { Combination, RolloutCheck } from './paired-evidence.ts';

/**
 * Tenant activation of self-authored skills: a release decision, taken per tenant for the
 * current combination, from passing paired evidence or an operator's explicit override. The
 * environment switches (SKILLSMITH_AUTHORING_ENABLED / SKILLSMITH_REVIEW_ENABLED) stay the
 * platform-wide capability; this decides which tenants use it.
 */

/**
 * The authoring implementation version: what the spec keys evidence by besides the model policy
 * and the policy profile. Bump it when a change alters what authoring produces — skill_manage's
 * rules, the background reviewer (its prompt, its tools, its candidate choice) or the skill
 * format it writes — so that evidence gathered for the old implementation stops counting.
 */
export const AUTHORING_IMPLEMENTATION_VERSION = 'authoring-1';

/** The rollout's slice of the configuration: the model policy, and the platform's authoring switches and policy profile. */
export interface RolloutSettings {
  rollout: { modelPolicy: string };
  authoring: { enabled: boolean; reviewEnabled: boolean; approvalProfile: 'none' | 'skill_authoring' };
}

/**
 * The combination this deployment runs: the model policy SKILLSMITH_MODEL_POLICY (default: the
 * configured LLM model), the policy profile SKILLSMITH_APPROVAL_PROFILE, and the code's
 * AUTHORING_IMPLEMENTATION_VERSION.
 */
export function currentCombination(config: RolloutSettings): Combination {
  return {
    modelPolicy: config.rollout.modelPolicy,
    policyProfile: config.authoring.approvalProfile,
    authoringVersion: AUTHORING_IMPLEMENTATION_VERSION,
  };
}

export function sameCombination(left: Combination, right: Combination): boolean {
  return (
    left.modelPolicy === right.modelPolicy && left.policyProfile === right.policyProfile && left.authoringVersion === right.authoringVersion
  );
}

/** One operator decision: `grant` activates without passing evidence, `revoke` withdraws a grant. */
export interface RolloutOverride {
  id: number;
  tenantId: string;
  combination: Combination;
  action: 'grant' | 'revoke';
  decidedBy: string;
  reason: string;
  decidedAt: Date;
}

export interface ActivationStatus {
  tenantId: string;
  combination: Combination;
  /** Authoring and review may run for this tenant (the platform switches permitting). */
  active: boolean;
  /** What activated it: passing evidence wins over an override; null when inactive. */
  basis: 'evidence' | 'override' | null;
  check: RolloutCheck;
  /** The override in force for this combination (the latest decision, when it is a grant). */
  override: RolloutOverride | null;
}

/** The decision for one tenant and combination, from its check and its latest override decision. */
export function decideActivation(
  tenantId: string,
  combination: Combination,
  check: RolloutCheck,
  latestOverride: RolloutOverride | null,
): ActivationStatus {
  const override = latestOverride?.action === 'grant' ? latestOverride : null;
  const basis = check.passed ? 'evidence' : override ? 'override' : null;
  return { tenantId, combination, active: basis !== null, basis, check, override };
}
