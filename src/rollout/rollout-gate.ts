import type pg from 'pg';
import { z } from 'zod';
import { SkillsmithError } from '../errors/skillsmith-error.ts';
import {
  currentCombination,
  decideActivation,
  sameCombination,
  type ActivationStatus,
  type RolloutOverride,
  type RolloutSettings,
} from './activation.ts';
import { checkPairedEvidence, type Combination, type RolloutCheck } from './paired-evidence.ts';
import { recordPairedSamples, recordPairsFile, type RecordPairsResult } from './pairs-recording.ts';
import { countPairs, insertOverride, latestOverride, listEvidenceCombinations, listOverrides } from './rollout-repository.ts';

/**
 * The rollout gate as an application service: records evidence and overrides, checks a
 * combination, and decides whether a tenant's authoring and review are active for the
 * combination this deployment runs. skill_manage and the background review ask it per tenant.
 */

/** The tenant's authoring is not activated for the current combination: no passing evidence, no override. */
export class SkillAuthoringNotActivated extends SkillsmithError {
  static override readonly code = 'SkillAuthoringNotActivated';
  static override readonly httpStatus = 403;
  readonly tenantId: string;
  readonly combination: Combination;
  readonly reasons: string[];
  constructor(status: ActivationStatus) {
    const { modelPolicy, policyProfile, authoringVersion } = status.combination;
    super(
      `skill authoring is not activated for tenant ${status.tenantId} under model policy ${JSON.stringify(modelPolicy)}, ` +
        `policy profile ${JSON.stringify(policyProfile)}, authoring version ${JSON.stringify(authoringVersion)}: ` +
        `${status.check.reasons.join('; ')}. Record passing paired evidence (skillsmith rollout record) ` +
        'or an operator override (skillsmith rollout override)',
    );
    this.tenantId = status.tenantId;
    this.combination = status.combination;
    this.reasons = status.check.reasons;
  }
}

/** The `rollout check` document: the contract's fields, plus the tenant and the combination checked. */
export type RolloutCheckDocument = RolloutCheck & { tenantId: string; combination: Combination };

export interface RolloutShow {
  tenantId: string;
  /** The combination this deployment runs (config and code; see README "Rollout gate"). */
  combination: Combination;
  /** The platform-wide switches, SKILLSMITH_AUTHORING_ENABLED and SKILLSMITH_REVIEW_ENABLED. */
  capability: { authoring: boolean; review: boolean };
  /** Activated for the tenant by passing evidence or an override. */
  active: boolean;
  basis: ActivationStatus['basis'];
  /** What actually runs for the tenant: the capability and the activation. */
  authoring: boolean;
  review: boolean;
  check: RolloutCheckDocument;
  override: RolloutOverride | null;
  /** Every override decision of the tenant, for any combination, oldest first. */
  overrides: RolloutOverride[];
  /** Every combination with recorded evidence; only the current one counts. */
  evidence: Array<{ combination: Combination; n: number; current: boolean }>;
}

export const overrideInputSchema = z.object({
  action: z.enum(['grant', 'revoke']),
  decidedBy: z.string().trim().min(1, 'who decides (--by) is required').max(200),
  reason: z.string().trim().min(1, 'why (--reason) is required').max(2000),
});
export type OverrideRequest = z.input<typeof overrideInputSchema> & { combination?: Combination };

export interface RolloutGate {
  /** The combination this deployment runs. */
  readonly combination: Combination;
  recordSamples(tenantId: string, samples: readonly unknown[]): Promise<RecordPairsResult>;
  recordFile(tenantId: string, file: string): Promise<RecordPairsResult & { file: string; lines: number }>;
  check(tenantId: string, combination: Combination): Promise<RolloutCheckDocument>;
  status(tenantId: string): Promise<ActivationStatus>;
  /** Throws SkillAuthoringNotActivated unless the tenant is active for the current combination. */
  requireActive(tenantId: string): Promise<void>;
  override(tenantId: string, request: OverrideRequest): Promise<RolloutOverride>;
  show(tenantId: string): Promise<RolloutShow>;
}

export interface RolloutGateDependencies {
  pool: pg.Pool;
  combination: Combination;
  capability: { authoring: boolean; review: boolean };
}

export function createRolloutGate({ pool, combination, capability }: RolloutGateDependencies): RolloutGate {
  const check = async (tenantId: string, checked: Combination): Promise<RolloutCheckDocument> => ({
    tenantId,
    combination: checked,
    ...checkPairedEvidence(await countPairs(pool, tenantId, checked)),
  });
  const status = async (tenantId: string): Promise<ActivationStatus> => {
    const [checked, override] = await Promise.all([check(tenantId, combination), latestOverride(pool, tenantId, combination)]);
    return decideActivation(tenantId, combination, checked, override);
  };
  return {
    combination,
    recordSamples: (tenantId, samples) =>
      recordPairedSamples(
        pool,
        tenantId,
        samples.map((value, index) => ({ line: index + 1, value })),
      ),
    recordFile: (tenantId, file) => recordPairsFile(pool, tenantId, file),
    check,
    status,
    async requireActive(tenantId) {
      const current = await status(tenantId);
      if (!current.active) throw new SkillAuthoringNotActivated(current);
    },
    async override(tenantId, request) {
      const parsed = overrideInputSchema.parse(request);
      return insertOverride(pool, tenantId, { ...parsed, combination: request.combination ?? combination });
    },
    async show(tenantId) {
      const [current, overrides, evidence] = await Promise.all([
        status(tenantId),
        listOverrides(pool, tenantId),
        listEvidenceCombinations(pool, tenantId),
      ]);
      return {
        tenantId,
        combination,
        capability,
        active: current.active,
        basis: current.basis,
        authoring: capability.authoring && current.active,
        review: capability.review && current.active,
        check: { tenantId, combination, ...current.check },
        override: current.override,
        overrides,
        evidence: evidence.map((entry) => ({ ...entry, current: sameCombination(entry.combination, combination) })),
      };
    },
  };
}

/** The gate for this deployment: the current combination and the platform switches from `config`. */
export function createConfiguredRolloutGate(pool: pg.Pool, config: RolloutSettings): RolloutGate {
  return createRolloutGate({
    pool,
    combination: currentCombination(config),
    capability: { authoring: config.authoring.enabled, review: config.authoring.reviewEnabled },
  });
}
