import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createActivities } from '../activities/index.ts';
import type { ActivityDependencies } from '../activities/dependencies.ts';
import type { Logger } from '../src/logging/logger.ts';
import { temporalConnectFailure, type TemporalAccess } from '../src/app/temporal-environment.ts';
import { sdkLogger } from './sdk-logger.ts';
import { currentWorkflowBundle } from './build-bundles.ts';

// The SDK bundles the workflows from this path: index.ts next to the sources, index.js in the build (dist/).
export const workflowsPath = fileURLToPath(new URL(`../workflows/index${extname(import.meta.url)}`, import.meta.url));

export interface WorkerOptions {
  address: string;
  /** API key, TLS and metadata for `address` (src/app/temporal-environment.ts); none: plain gRPC, as to the stack's own dev server. */
  access?: TemporalAccess;
  namespace: string;
  taskQueue: string;
  dependencies: ActivityDependencies;
  /**
   * `host:port` for the SDK's Prometheus endpoint (`/metrics`: task slots, poll and schedule
   * latencies, workflow and activity completions — the `temporal_*` series), from
   * SKILLSMITH_WORKER_METRICS_HOST/_PORT; none = no endpoint. One per process, like the runtime.
   */
  metricsBindAddress?: string;
  /**
   * A bundle of the workflows at workflowsPath made beforehand (`bundleWorkflowCode`): the worker
   * starts without bundling them itself, seconds of CPU each time (the test suite bundles once).
   * Unset: the build's bundle where it is current (currentWorkflowBundle), else bundled here.
   */
  workflowBundlePath?: string;
}

/**
 * How long the SDK may hold an activity's heartbeats before sending one, and so how late a running
 * activity learns that its pass was cancelled (the answer to a heartbeat carries the cancel). The
 * SDK's default is 0.8 × the heartbeat timeout: 24 s for embedding, 4 min for clustering, all the
 * while a cancelled pass kept its worker busy (the CLI test's pass embedded all 1,500 goals after
 * its cancel). A small RPC a second per running activity is the price.
 */
const HEARTBEAT_THROTTLE_INTERVAL = '1 second';

let runtimeInstalled = false;

/**
 * The process's one Temporal SDK runtime, installed by the first caller (later calls change
 * nothing): the SDK's own logs (bundler output, state changes) only at warn and above, through
 * `logger`. Core's native logs are forwarded to it (stderr): printed directly they go to stdout
 * and break the --json output of commands that run a worker in-process (demo, eval). Exported so
 * that a test's hand-built worker installs the same runtime, once, rather than its own.
 */
export function installWorkerRuntime(logger: Logger, metricsBindAddress?: string): void {
  if (runtimeInstalled) return;
  Runtime.install({
    logger: sdkLogger(logger),
    telemetryOptions: {
      logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} },
      ...(metricsBindAddress ? { metrics: { prometheus: { bindAddress: metricsBindAddress } } } : {}),
    },
  });
  runtimeInstalled = true;
}

/** A worker over the given dependencies; the caller runs it and closes the connection. */
export async function createWorker(options: WorkerOptions): Promise<{ worker: Worker; connection: NativeConnection }> {
  installWorkerRuntime(options.dependencies.logger, options.metricsBindAddress);
  const access = options.access ?? {};
  const connection = await NativeConnection.connect({ ...access, address: options.address }).catch(async (error: unknown) => {
    throw await temporalConnectFailure({ address: options.address, access }, options.address, error);
  });
  // From dist/: the build's bundle while it is current (scripts/bundle-workflows.js); from the sources, none.
  const bundlePath =
    options.workflowBundlePath ??
    (extname(workflowsPath) === '.js' ? currentWorkflowBundle(fileURLToPath(new URL('..', import.meta.url))) : undefined);
  const worker = await Worker.create({
    connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    ...(bundlePath ? { workflowBundle: { codePath: bundlePath } } : { workflowsPath }),
    activities: createActivities(options.dependencies),
    maxHeartbeatThrottleInterval: HEARTBEAT_THROTTLE_INTERVAL,
  });
  return { worker, connection };
}
