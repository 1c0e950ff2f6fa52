import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/app/config.ts';
import { evalStackConfig } from '../../src/cli/commands/eval.ts';
import { workerMetricsAddress } from '../../workers/runtime.ts';

describe('the stack eval starts for itself', () => {
  it('binds free ports for everything, and no worker metrics port, whatever a running `up` was configured with', () => {
    const configured = loadConfig({
      SKILLSMITH_TEMPORAL_PORT: '7233',
      SKILLSMITH_TEMPORAL_UI_PORT: '8233',
      SKILLSMITH_POSTGRES_PORT: '5433',
      SKILLSMITH_WORKER_METRICS_PORT: '9464',
    });
    expect(workerMetricsAddress(configured)).toBe('127.0.0.1:9464');
    const own = evalStackConfig(configured);
    // Port 0: the dev server and PostgreSQL take a free port (temporal-dev-server.ts, local-stack.ts).
    expect({ temporal: own.temporal.port, ui: own.temporal.uiPort, postgres: own.postgresPort }).toEqual({
      temporal: 0,
      ui: 0,
      postgres: 0,
    });
    expect(workerMetricsAddress(own)).toBeUndefined();
    expect(own.embedding).toBe(configured.embedding);
  });
});
