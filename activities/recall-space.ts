import type { ActivityDependencies } from './dependencies.ts';
import { whileHeartbeating } from './heartbeat.ts';
import { buildRecallSpace, type RecallSpaceBuilt } from '../src/recall/recall-space-repository.ts';

export interface BuildRecallSpaceInput {
  tenantId: string;
  passId: string;
}

/**
 * The pass's last step: the tenant's recall space rebuilt from what it now knows — its procedures'
 * learned goals and the runs of jobs none of them does (src/recall/recall-space.ts). Idempotent: a
 * retry rebuilds the same space from the same rows (its version counts one more).
 */
export const createRecallSpaceActivities = ({ pool, tenantConfig }: Pick<ActivityDependencies, 'pool' | 'tenantConfig'>) => ({
  async buildRecallSpace(input: BuildRecallSpaceInput): Promise<RecallSpaceBuilt | null> {
    const config = await tenantConfig(input.tenantId);
    return whileHeartbeating(() => buildRecallSpace(pool, input.tenantId, config.embedding.model, config.synthesis, input.passId));
  },
});
