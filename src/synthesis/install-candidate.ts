import { createHash } from 'node:crypto';
import type pg from 'pg';
import semver from 'semver';
import type { Embedder } from '../embedding/embedder.ts';
import { checkProcedureModel, ensureProcedureIndex, findNearestProcedures, findProcedureByName, insertProcedure, markSuperseded, updateProcedure } from '../procedures/procedure-repository.ts';
import { type Procedure } from '../procedures/procedure.ts';
import { findStoredRunHashes } from '../runs/run-repository.ts';
import { parseSkillDocument, serializeSkillDocument } from '../skills/skill-format.ts';
import { SKILL_MANIFEST_PATH } from '../skills/skill-package.ts';
import type { SkillRepository } from '../store/skill-repository.ts';
import { getPassCluster, markClusterInstalled } from './pass-repository.ts';
import { type PassCluster } from './pass-record.ts';
import { reconcile, type ReconcileDecision } from './reconcile.ts';
import { SkillsmithError } from '../skillsmith-error.ts';

/** The principal recorded on every revision a synthesis pass writes. */
export const SYNTHESIS_PRINCIPAL = 'skillsmith:synthesis';

export interface InstallDependencies {
  pool: pg.Pool;
  skills: SkillRepository;
  embedder: Embedder;
  similarityTau: number;
  defaultLicense: string;
}

export interface InstallOutcome {
  decision: 'add' | 'update' | 'noop' | 'supersede';
  skillName: string;
  revision: number | null;
  reason?: string | undefined;
}

/** Provenance must name real runs at synthesis time. */
export class ProvenanceUnverified extends SkillsmithError {
  static override readonly code = 'ProvenanceUnverified';
}

function storedOutcome(cluster: PassCluster): InstallOutcome {
  return {
    decision: cluster.decision!,
    skillName: cluster.skillName ?? '',
    revision: cluster.revision,
    reason: cluster.skipReason ?? undefined,
  };
}

async function nearestMatch(deps: InstallDependencies, tenantId: string, embedding: Float32Array, name: string): Promise<Procedure | undefined> {
  const nearest = await findNearestProcedures(deps.pool, tenantId, embedding, { limit: 5, recallableOnly: false });
  const live = nearest.find((procedure) => procedure.supersededBy === null && procedure.score >= deps.similarityTau);
  if (live) return live;
  // A procedure of the same name is the same skill even when its wording drifted below τ.
  return findProcedureByName(deps.pool, tenantId, name);
}

/**
 * RECONCILE + INSTALL for one distilled cluster, idempotent on (pass, cluster): the revision,
 * its archive, the procedure row and the cluster's "installed" mark are written in one
 * transaction, so a retried or replayed install writes nothing twice and skips no revision.
 */
export async function reconcileAndInstall(
  deps: InstallDependencies,
  input: { tenantId: string; passId: string; clusterKey: string },
): Promise<InstallOutcome> {
  const { tenantId, passId, clusterKey } = input;
  const cluster = await getPassCluster(deps.pool, tenantId, passId, clusterKey);
  if (cluster.status === 'installed') return storedOutcome(cluster);
  if (cluster.status !== 'distilled' || !cluster.candidate) {
    throw new Error(`cluster ${clusterKey} of pass ${passId} has no distilled candidate (status ${cluster.status})`);
  }

  const verified = new Set(
    (await findStoredRunHashes(deps.pool, tenantId, cluster.successfulRunIds)).map((run) => run.runId),
  );
  const missing = cluster.successfulRunIds.filter((runId) => !verified.has(runId));
  if (missing.length > 0) throw new ProvenanceUnverified(`provenance names runs that do not exist: ${missing.slice(0, 5).join(', ')}`);

  const parsed = parseSkillDocument(cluster.candidate, { defaultLicense: deps.defaultLicense });
  const [embedding] = await deps.embedder.embed([parsed.manifest.description], 'document');
  await checkProcedureModel(deps.pool, tenantId, deps.embedder.modelId, embedding!.length);
  await ensureProcedureIndex(deps.pool, embedding!.length);

  const candidate = {
    name: parsed.manifest.name,
    toolSequence: cluster.toolSequence ?? [],
    successCount: cluster.successful,
    attemptCount: cluster.size,
    fromSessions: cluster.successfulRunIds,
  };
  const match = await nearestMatch(deps, tenantId, embedding!, parsed.manifest.name);
  const decision: ReconcileDecision = reconcile(candidate, match);

  if (decision.action === 'noop') {
    const outcome = { decision: 'noop' as const, skillName: decision.target.name, revision: decision.target.revision, reason: decision.reason };
    await markClusterInstalled(deps.pool, tenantId, passId, clusterKey, outcome);
    return outcome;
  }

  let manifest = parsed.manifest;
  if (decision.action === 'update') {
    // The skill's identity is its name: an update is a new revision of the matched skill.
    const current = await deps.skills.resolve(tenantId, `${decision.target.name}@${decision.target.revision}`);
    manifest = { ...manifest, name: decision.target.name, version: semver.inc(current.manifest.version, 'minor') ?? current.manifest.version };
  }
  const document = serializeSkillDocument(manifest, parsed.body);
  const trackRecord =
    decision.action === 'update'
      ? decision.trackRecord
      : { successCount: candidate.successCount, attemptCount: candidate.attemptCount, fromSessions: candidate.fromSessions };

  let outcome: InstallOutcome | undefined;
  const revision = await deps.skills.install(
    tenantId,
    { directoryName: manifest.name, files: new Map([[SKILL_MANIFEST_PATH, new TextEncoder().encode(document)]]) },
    {
      source: 'agent',
      expectedRevision: decision.action === 'update' ? decision.target.revision : 0,
      authoredBy: {
        runId: candidate.fromSessions[0]!,
        principalId: SYNTHESIS_PRINCIPAL,
        invocationId: `${passId}#${clusterKey}`,
        idempotencyKey: createHash('sha256').update(document).digest('hex'),
      },
      inTransaction: async (client, installed) => {
        const write = {
          skillId: installed.skillId,
          name: installed.name,
          revision: installed.revision,
          whenToUse: manifest.description,
          toolSequence: candidate.toolSequence,
          toolsRequired: manifest.requiredTools,
          ...trackRecord,
          embedding: embedding!,
          embeddingModel: deps.embedder.modelId,
        };
        if (decision.action === 'update') {
          await updateProcedure(client, tenantId, decision.target.id, write);
        } else {
          const created = await insertProcedure(client, tenantId, write);
          if (decision.action === 'supersede') await markSuperseded(client, tenantId, decision.weaker.id, created.id);
        }
        outcome = {
          decision: decision.action,
          skillName: installed.name,
          revision: installed.revision,
          reason: decision.action === 'supersede' ? `supersedes ${decision.weaker.name}` : undefined,
        };
        await markClusterInstalled(client, tenantId, passId, clusterKey, outcome);
      },
    },
  );
  return outcome ?? { decision: decision.action, skillName: revision.name, revision: revision.revision };
}
