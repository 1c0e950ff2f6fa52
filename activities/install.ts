import type { ActivityDependencies } from './dependencies.ts';
import { whileHeartbeating } from './heartbeat.ts';
import { SkillNameNotUnique, SkillValidationError } from '../src/skills/validation-errors.ts';
import { SkillRevisionConflict, SkillSourceImmutable } from '../src/skills/skill-errors.ts';
import { markClusterSkipped } from '../src/synthesis/pass-repository.ts';
import { installCluster, ProvenanceUnverified, type InstallOutcome } from '../src/synthesis/install-cluster.ts';

export interface InstallClusterInput {
  tenantId: string;
  passId: string;
  clusterKey: string;
}

export type InstallClusterResult = InstallOutcome | { decision: 'skipped'; reason: string };

/** Store-level refusals skip the cluster with the reason; they are not worth a retry. */
const refusals = [SkillValidationError, SkillNameNotUnique, SkillSourceImmutable, SkillRevisionConflict, ProvenanceUnverified];

/** INSTALL of what reconcile decided, in one transaction per cluster, idempotent on (pass, cluster). */
export const createInstallActivities = ({ pool, tenantConfig, skills, embedder }: ActivityDependencies) => ({
  async installCluster(input: InstallClusterInput): Promise<InstallClusterResult> {
    try {
      const config = await tenantConfig(input.tenantId);
      const dependencies = {
        pool,
        skills,
        embedder: await embedder(input.tenantId),
        defaultLicense: config.skillLicense,
        goalModel: config.embedding.model,
      };
      return await whileHeartbeating(() => installCluster(dependencies, input));
    } catch (error) {
      if (!refusals.some((refusal) => error instanceof refusal)) throw error;
      const reason = `install refused: ${(error as Error).name}: ${(error as Error).message}`;
      await markClusterSkipped(pool, input.tenantId, input.passId, input.clusterKey, reason);
      return { decision: 'skipped', reason };
    }
  },
});
