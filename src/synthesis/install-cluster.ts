import { createHash } from 'node:crypto';
import type pg from 'pg';
import semver from 'semver';
import type { Embedder } from '../embedding/embedder.ts';
import {
  checkProcedureModel,
  countProcedureRuns,
  findProcedureById,
  findProcedureByName,
  insertProcedure,
  markSuperseded,
  updateProcedure,
} from '../procedures/procedure-repository.ts';
import type { Procedure } from '../procedures/procedure.ts';
import { noteProceduresInstalled } from '../procedures/procedure-presence.ts';
import { ensureRecallIndex, storeLearnedGoalVectors } from '../procedures/procedure-goal-vector-repository.ts';
import { findStoredRunHashes } from '../runs/run-repository.ts';
import { SkillNotFound } from '../skills/skill-errors.ts';
import { parseSkillDocument, serializeSkillDocument } from '../skills/skill-format.ts';
import { SKILL_MANIFEST_PATH } from '../skills/skill-package.ts';
import type { SkillRepository } from '../store/skill-repository.ts';
import { getPassCluster, markClusterInstalled } from './pass-repository.ts';
import type { PassCluster } from './pass-cluster.ts';
import { countedRunsOf } from './cluster-track-record.ts';
import { withIdentity } from './skill-naming.ts';
import { SkillsmithError } from '../errors/skillsmith-error.ts';

/** The principal recorded on every revision a synthesis pass writes. */
export const SYNTHESIS_PRINCIPAL = 'skillsmith:synthesis';

export interface InstallDependencies {
  pool: pg.Pool;
  skills: SkillRepository;
  embedder: Embedder;
  defaultLicense: string;
  /** The embedding model whose goal vectors the pass clustered (the runs are counted with it). */
  goalModel: string;
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

function recordedOutcome(cluster: PassCluster): InstallOutcome {
  return {
    decision: cluster.decision!,
    skillName: cluster.skillName ?? '',
    revision: cluster.revision,
    reason: cluster.decisionReason ?? undefined,
  };
}

/**
 * A new procedure's skill name: the distilled one, or — when another skill holds it (a different
 * procedure whose goals read alike) — the first free `<name>-2`, `-3`, …, never a second revision
 * of a skill it is not.
 */
async function freeSkillName(deps: InstallDependencies, tenantId: string, name: string): Promise<string> {
  for (let suffix = 1; ; suffix++) {
    const tail = suffix === 1 ? '' : `-${suffix}`;
    const candidate = `${name.slice(0, 64 - tail.length).replace(/-+$/, '')}${tail}`;
    if (await findProcedureByName(deps.pool, tenantId, candidate)) continue;
    try {
      await deps.skills.resolve(tenantId, candidate);
    } catch (error) {
      if (error instanceof SkillNotFound) return candidate;
      throw error;
    }
  }
}

async function recordedTarget(deps: InstallDependencies, tenantId: string, cluster: PassCluster): Promise<Procedure> {
  const target = cluster.targetProcedureId ? await findProcedureById(deps.pool, tenantId, cluster.targetProcedureId) : undefined;
  if (!target) throw new Error(`cluster ${cluster.clusterKey}: the procedure reconcile matched (${cluster.targetProcedureId}) is gone`);
  return target;
}

/**
 * INSTALL of one reconciled, distilled cluster, as reconcile decided it, idempotent on (pass,
 * cluster): the revision, its archive, the procedure row and the cluster's "installed" mark are
 * written in one transaction, so a retried or replayed install writes nothing twice and skips no
 * revision.
 */
export async function installCluster(
  deps: InstallDependencies,
  input: { tenantId: string; passId: string; clusterKey: string },
): Promise<InstallOutcome> {
  const { tenantId, passId, clusterKey } = input;
  const cluster = await getPassCluster(deps.pool, tenantId, passId, clusterKey);
  if (cluster.status === 'installed') return recordedOutcome(cluster);
  if (!cluster.decision) throw new Error(`cluster ${clusterKey} of pass ${passId} was not reconciled before its install`);
  if (cluster.decision === 'noop') return recordedOutcome(cluster);
  if (cluster.status !== 'distilled' || !cluster.candidate) {
    throw new Error(`cluster ${clusterKey} of pass ${passId} has no distilled candidate (status ${cluster.status})`);
  }

  const counted = await countedRunsOf(deps.pool, tenantId, passId, cluster);
  const verified = new Set(
    (
      await findStoredRunHashes(
        deps.pool,
        tenantId,
        counted.map((run) => run.runId),
      )
    ).map((run) => run.runId),
  );
  const missing = counted.filter((run) => !verified.has(run.runId)).map((run) => run.runId);
  if (missing.length > 0) throw new ProvenanceUnverified(`provenance names runs that do not exist: ${missing.slice(0, 5).join(', ')}`);

  const parsed = parseSkillDocument(cluster.candidate, { defaultLicense: deps.defaultLicense });
  const decision = cluster.decision;
  const target = decision === 'update' || decision === 'supersede' ? await recordedTarget(deps, tenantId, cluster) : undefined;
  let manifest = parsed.manifest;
  if (decision === 'update') {
    // The skill's identity is its name: an update is a new revision of the matched skill.
    const current = await deps.skills.resolve(tenantId, `${target!.name}@${target!.revision}`);
    manifest = withIdentity(manifest, {
      name: target!.name,
      version: semver.inc(current.manifest.version, 'minor') ?? current.manifest.version,
    });
  } else {
    manifest = withIdentity(manifest, { name: await freeSkillName(deps, tenantId, manifest.name), version: manifest.version });
  }
  // Embedded for the goal task: recall compares goals with the goals a procedure was learned from and with this.
  const [embedding] = await deps.embedder.embed([manifest.description], 'goal');
  await checkProcedureModel(deps.pool, tenantId, deps.embedder.modelId, embedding!.length);
  await ensureRecallIndex(deps.pool, embedding!.length);
  const document = serializeSkillDocument(manifest, parsed.body);
  const toolSequence = cluster.toolSequence ?? [];

  let outcome: InstallOutcome | undefined;
  const revision = await deps.skills.install(
    tenantId,
    { directoryName: manifest.name, files: new Map([[SKILL_MANIFEST_PATH, new TextEncoder().encode(document)]]) },
    {
      source: 'agent',
      // The revision reconcile saw: a skill changed since then is a conflict, not silently overwritten.
      expectedRevision: decision === 'update' ? (cluster.revision ?? target!.revision) : 0,
      authoredBy: {
        runId: cluster.successfulRunIds[0]!,
        principalId: SYNTHESIS_PRINCIPAL,
        invocationId: `${passId}#${clusterKey}`,
        idempotencyKey: createHash('sha256').update(document).digest('hex'),
      },
      inTransaction: async (client, installed) => {
        const content = {
          skillId: installed.skillId,
          name: installed.name,
          revision: installed.revision,
          whenToUse: manifest.description,
          toolSequence,
          toolsRequired: manifest.requiredTools,
          embedding: embedding!,
          embeddingModel: deps.embedder.modelId,
        };
        let procedureId: string;
        if (decision === 'update') {
          await updateProcedure(client, tenantId, target!.id, content);
          procedureId = target!.id;
        } else {
          procedureId = (await insertProcedure(client, tenantId, { ...content, successCount: 0, attemptCount: 0, fromSessions: [] })).id;
          if (decision === 'supersede') await markSuperseded(client, tenantId, target!.id, procedureId);
        }
        await countProcedureRuns(client, tenantId, procedureId, passId, counted, deps.goalModel);
        await storeLearnedGoalVectors(client, tenantId, procedureId, deps.embedder.modelId);
        outcome = {
          decision,
          skillName: installed.name,
          revision: installed.revision,
          reason: cluster.decisionReason ?? undefined,
        };
        await markClusterInstalled(client, tenantId, passId, clusterKey, outcome);
      },
    },
  );
  // Committed: the run intake's door of this process asks again whether the tenant has procedures
  // (a first procedure makes its runs worth a review; src/procedures/procedure-presence.ts).
  noteProceduresInstalled(tenantId);
  return outcome ?? { decision, skillName: revision.name, revision: revision.revision };
}
