import { ActivityFailure, ApplicationFailure, patched, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { InstallClusterResult } from '../activities/install.ts';
import { retryPolicy } from './retry-policies.ts';
import { DEFAULT_HEARTBEAT_TIMEOUT_SECONDS } from '../src/contracts/pass-contract.ts';

/** The cluster's activities, each heartbeating: a lost worker costs the heartbeat timeout, not the start-to-close timeout. */
const clusterActivities = (heartbeatTimeoutSeconds: number) => {
  const heartbeatTimeout = heartbeatTimeoutSeconds * 1000;
  // Database reads and one write: the cluster against every procedure of the tenant.
  const { reconcileCluster } = proxyActivities<Activities>({
    summary: 'reconcile by procedure: ADD, UPDATE, NOOP or SUPERSEDE',
    startToCloseTimeout: '2 minutes',
    heartbeatTimeout,
    retry: retryPolicy({ initialIntervalSeconds: 1 }),
  });
  // The LLM call: one attempt may take long (heartbeats show the worker is alive); an unreachable
  // model is retried briefly, then stops the pass.
  const { distillCluster } = proxyActivities<Activities>({
    summary: 'distil the cluster into a SKILL.md candidate',
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout,
    retry: retryPolicy({ initialIntervalSeconds: 2, maximumAttempts: 3 }),
  });
  // One short transaction (plus one embedding of when_to_use). `reconcileAndInstall` is its name in
  // histories recorded before INSTALL_STEP_NAMED_PATCH.
  const { installCluster, reconcileAndInstall } = proxyActivities<Activities>({
    summary: 'install the decided revision and count its runs',
    startToCloseTimeout: '2 minutes',
    heartbeatTimeout,
    retry: retryPolicy({ initialIntervalSeconds: 1 }),
  });
  return { reconcileCluster, distillCluster, installCluster, reconcileAndInstall };
};

export interface SynthesizeClusterInput {
  tenantId: string;
  passId: string;
  clusterKey: string;
  /** The pass's heartbeat timeout (SynthesisPassInput); absent: the default. */
  heartbeatTimeoutSeconds?: number;
}

export type SynthesizeClusterResult = InstallClusterResult | { decision: 'llm-unavailable'; reason: string };

/** Error types that mean the model cannot be used at all: the pass stops installing. */
export const LLM_UNAVAILABLE_TYPES = ['LlmUnavailable', 'LlmNotConfigured', 'LlmResponseInvalid'];

/**
 * Histories recorded before reconcile ran ahead of distillation replay without it (their install
 * step decided); new executions reconcile first.
 */
export const RECONCILE_FIRST_PATCH = 'reconcile-by-procedure-before-distill';

/** Histories recorded before it called the install step `reconcileAndInstall`; new executions call it `installCluster`. */
export const INSTALL_STEP_NAMED_PATCH = 'install-step-named-install-cluster';

/** One qualifying cluster of a pass: reconcile → distill → install; a NOOP is never distilled. */
export async function synthesizeCluster(input: SynthesizeClusterInput): Promise<SynthesizeClusterResult> {
  const { reconcileCluster, distillCluster, installCluster, reconcileAndInstall } = clusterActivities(
    input.heartbeatTimeoutSeconds ?? DEFAULT_HEARTBEAT_TIMEOUT_SECONDS,
  );
  const { tenantId, passId, clusterKey } = input;
  if (patched(RECONCILE_FIRST_PATCH)) {
    const decided = await reconcileCluster({ tenantId, passId, clusterKey });
    if (decided.decision === 'skipped') return { decision: 'skipped', reason: decided.reason };
    if (decided.decision === 'noop')
      return { decision: 'noop', skillName: decided.skillName ?? '', revision: decided.revision, reason: decided.reason };
  }
  let distilled;
  try {
    distilled = await distillCluster({ tenantId, passId, clusterKey });
  } catch (error) {
    const cause = error instanceof ActivityFailure ? error.cause : undefined;
    if (cause instanceof ApplicationFailure && cause.type && LLM_UNAVAILABLE_TYPES.includes(cause.type)) {
      return { decision: 'llm-unavailable', reason: cause.message };
    }
    throw error;
  }
  if (distilled.status === 'skipped') return { decision: 'skipped', reason: distilled.reason };
  const install = patched(INSTALL_STEP_NAMED_PATCH) ? installCluster : reconcileAndInstall;
  return await install({ tenantId, passId, clusterKey });
}
