import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/**
 * What one process measures itself (prom-client): Node's process metrics (CPU, memory, event
 * loop lag, GC, handles — prom-client's default set) and the intake as this API process sees it:
 * run reports accepted (202: stored before the answer) or refused, and the lag from a run's
 * completion to its durable storage. One registry per process, built by whoever serves it and
 * passed down — prom-client's global registry is never used, so two servers in one process
 * (tests, `skillsmith up`) do not register twice.
 */
export interface ProcessMetrics {
  registry: Registry;
  intakeAccepted: Counter<'tenant'>;
  intakeRefused: Counter<'tenant' | 'code'>;
  intakeLag: Histogram<'tenant'>;
}

/** Seconds from a run's completedAt to its storage: agents report at once, or after a queue drains. */
const LAG_BUCKETS = [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 21_600, 86_400];

export function createProcessMetrics(): ProcessMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    intakeAccepted: new Counter({
      name: 'skillsmith_intake_accepted_total',
      help: 'Run reports this API process accepted (202): each was stored before the answer.',
      labelNames: ['tenant'],
      registers: [registry],
    }),
    intakeRefused: new Counter({
      name: 'skillsmith_intake_refused_total',
      help: 'Run reports this API process refused, by error code (nothing of them was stored, or a stored run was not handed to its intake).',
      labelNames: ['tenant', 'code'],
      registers: [registry],
    }),
    intakeLag: new Histogram({
      name: 'skillsmith_intake_lag_seconds',
      help: "Seconds from a run's completedAt to its storage by this API process.",
      labelNames: ['tenant'],
      buckets: LAG_BUCKETS,
      registers: [registry],
    }),
  };
}
