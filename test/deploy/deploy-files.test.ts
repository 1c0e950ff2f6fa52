import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { TENANT_GAUGES } from '../../src/metrics/metrics-exposition.ts';
import { createProcessMetrics } from '../../src/metrics/process-metrics.ts';
import { settingNames } from '../../src/app/config.ts';
import { SCALE_OUT } from '../support/scale-out-topology.ts';

/**
 * deploy/ and docker-compose.yml are not exercised here (no Docker engine): they are parsed (the
 * compose file validated by compose itself too, where its CLI is installed), and what they say is
 * checked against the code and docs/operations.md's scale-out recipe — the ports Prometheus
 * scrapes are the ones the services serve, the compose services are the recipe's commands and
 * variables, and every skillsmith_* series the dashboard queries is one /metrics exposes.
 */
const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

/** A compose CLI on PATH, v2's plugin first (`config` validates a file without an engine). */
const composeCommand = [['docker', 'compose'], ['docker-compose']].find(
  ([command, ...args]) => spawnSync(command!, [...args, 'version'], { stdio: 'ignore' }).status === 0,
);

/** A command as words: v1 keeps the file's string, v2 splits it into an array. */
const commandLine = (command: string | string[] | undefined) =>
  Array.isArray(command) ? command.join(' ') : (command ?? '').replaceAll('"', '');

/** Variables the compose file passes through from the host's environment, as the recipe leaves them to the shell's. */
const PASSED_THROUGH = new Set(['SKILLSMITH_LLM_BASE_URL', 'SKILLSMITH_API_TOKENS']);

interface ComposeService {
  image?: string;
  command?: string | string[];
  deploy?: { replicas?: number };
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  depends_on?: string[] | Record<string, unknown>;
}
interface ScrapeConfig {
  job_name: string;
  metrics_path?: string;
  static_configs?: Array<{ targets: string[] }>;
  dns_sd_configs?: Array<{ names: string[]; type: string; port: number }>;
}

describe('deploy: Prometheus, the compose stack and the Grafana dashboard', () => {
  const compose = parse(read('docker-compose.yml'), { merge: true }) as {
    services: Record<string, ComposeService>;
    volumes: Record<string, unknown>;
  };
  const prometheus = parse(read('deploy/prometheus.yml')) as { scrape_configs: ScrapeConfig[] };
  const dashboard = JSON.parse(read('deploy/grafana/skillsmith.json')) as {
    uid: string;
    panels: Array<{ type: string; title: string; targets?: Array<{ expr: string }> }>;
    templating: { list: Array<{ name: string }> };
  };

  it('scrapes the API on its port and every worker on the SDK metrics port it is given', () => {
    const jobs = new Map(prometheus.scrape_configs.map((job) => [job.job_name, job]));
    const api = jobs.get('skillsmith-api')!;
    expect(api.metrics_path).toBe('/metrics');
    expect(api.dns_sd_configs![0]).toMatchObject({ names: ['api'], type: 'A' });
    expect(String(api.dns_sd_configs![0]!.port)).toBe(compose.services.api!.environment!.SKILLSMITH_API_PORT);
    expect(compose.services.api!.ports).toContain('8080-8081:8080');
    const worker = jobs.get('skillsmith-worker')!;
    expect(worker.dns_sd_configs![0]).toMatchObject({ names: ['worker'], type: 'A' });
    expect(String(worker.dns_sd_configs![0]!.port)).toBe(compose.services.worker!.environment!.SKILLSMITH_WORKER_METRICS_PORT);
    expect(compose.services.worker!.environment!.SKILLSMITH_WORKER_METRICS_HOST).toBe('0.0.0.0');
  });

  it('is the scale-out recipe of docs/operations.md: its services, images, commands, ports and variables', () => {
    const { services } = compose;
    expect(Object.keys(services).sort()).toEqual([
      'api',
      'install',
      'postgres',
      'prometheus',
      'temporal',
      'temporal-db',
      'temporal-ui',
      'worker',
    ]);
    expect(services.postgres!.image).toMatch(/^pgvector\/pgvector:pg1[6-9]$/);
    expect(services.temporal!.image).toMatch(/^temporalio\/(auto-setup|server):/);
    // The topology test/faults/scale-out.test.ts runs as processes.
    expect({ workers: services.worker!.deploy?.replicas, apis: services.api!.deploy?.replicas }).toEqual({
      workers: SCALE_OUT.workers,
      apis: SCALE_OUT.apis,
    });
    const recipe = /## Scale-out: the compose topology without containers[\s\S]*?```sh\n([\s\S]*?)```/.exec(
      read('docs/operations.md'),
    )![1]!;
    const recipeVariables = new Set([...recipe.matchAll(/\b([A-Z][A-Z0-9_]+)=/g)].map((match) => match[1]!));
    // The recipe's commands: the model and runtime pulled once, then the processes.
    for (const [name, command] of [
      ['install', 'models pull'],
      ['worker', 'worker'],
      ['api', 'api'],
    ] as const) {
      const service = services[name]!;
      // The package's engines.
      expect(Number(/^node:(\d+)/.exec(service.image!)![1])).toBeGreaterThanOrEqual(20);
      expect(service.command).toBe(
        name === 'install' ? `sh -c "npm ci && node bin/skillsmith.js ${command}"` : `node bin/skillsmith.js ${command}`,
      );
      expect(recipe).toContain(`npx skillsmith ${command}`);
      const variables = Object.keys(service.environment!);
      // Every variable is one skillsmith reads (a misspelt one would be ignored), and one the recipe sets.
      expect(variables.filter((variable) => !settingNames.includes(variable))).toEqual([]);
      expect(variables.filter((variable) => !recipeVariables.has(variable) && !PASSED_THROUGH.has(variable))).toEqual([]);
      expect(service.environment).toMatchObject({ SKILLSMITH_MODEL_DIR: '/models', SKILLSMITH_EMBEDDING_RUNTIME_DIR: '/runtime' });
      expect(service.volumes).toEqual(['.:/app', './models:/models', 'runtime:/runtime']);
    }
    for (const name of ['worker', 'api'] as const) {
      const service = services[name]!;
      // Not one `npm ci` per replica: each would delete the node_modules another already runs on.
      expect(service.depends_on).toMatchObject({ install: { condition: 'service_completed_successfully' } });
      expect(service.environment).toMatchObject({
        DATABASE_URL: expect.stringMatching(/@postgres:5432\//),
        TEMPORAL_ADDRESS: 'temporal:7233',
        TEMPORAL_TASK_QUEUE: 'skillsmith',
      });
    }
    expect(services.temporal!.ports).toContain('7233:7233');
    expect(recipe).toMatch(/TEMPORAL_ADDRESS=127\.0\.0\.1:7233/);
    // The ports: the APIs on 8080 and 8081, the workers' metrics from 9464 on.
    expect(recipe).toMatch(/for port in 8080 8081/);
    expect(recipe).toContain('$((9463 + i))');
    expect(services.worker!.environment!.SKILLSMITH_WORKER_METRICS_PORT).toBe('9464');
  });

  // Compose's own validation (schema, interpolation, the merge keys) needs no engine, only the CLI:
  // `docker compose` (v2), else the standalone `docker-compose`. .ci/run installs Debian's.
  it.skipIf(!composeCommand)('is a valid compose file by compose itself, with the services the YAML check reads', () => {
    const [command, ...args] = composeCommand!;
    const result = spawnSync(command!, [...args, '-f', fileURLToPath(new URL('../../docker-compose.yml', import.meta.url)), 'config'], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
    });
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.status).toBe(0);
    const normalised = parse(result.stdout) as { services: Record<string, ComposeService> };
    expect(Object.keys(normalised.services).sort()).toEqual(Object.keys(compose.services).sort());
    for (const name of ['install', 'worker', 'api']) {
      const service = normalised.services[name]!;
      expect(commandLine(service.command)).toBe(commandLine(compose.services[name]!.command));
      expect(service.deploy?.replicas).toBe(compose.services[name]!.deploy?.replicas);
      expect(Object.keys(service.environment ?? {}).sort()).toEqual(Object.keys(compose.services[name]!.environment!).sort());
    }
  });

  it('runs Prometheus in the compose stack over deploy/prometheus.yml', () => {
    const service = compose.services.prometheus!;
    expect(service.volumes).toContain('./deploy/prometheus.yml:/etc/prometheus/prometheus.yml:ro');
    expect(service.depends_on).toEqual(expect.arrayContaining(['api', 'worker']));
    expect(Object.keys(compose.volumes)).toContain('prometheusdata');
    expect(compose.services.api!.environment!.SKILLSMITH_METRICS_PUBLIC).toMatch(/true/);
  });

  it('queries only series that exist: every skillsmith_* name in the dashboard is exposed by /metrics', async () => {
    const processNames = (await createProcessMetrics().registry.getMetricsAsJSON()).map((metric) => metric.name);
    const exposed = new Set([...Object.keys(TENANT_GAUGES), ...processNames]);
    const targets = dashboard.panels.flatMap((panel) => panel.targets ?? []);
    expect(targets.length).toBeGreaterThan(20);
    const queried = new Set(
      targets.flatMap((target) =>
        [...target.expr.matchAll(/\b(skillsmith_[a-z0-9_]+|process_[a-z_]+|nodejs_[a-z0-9_]+)/g)].map((match) => match[1]!),
      ),
    );
    const histogramSuffix = /_(bucket|sum|count)$/;
    const unknown = [...queried].filter((name) => !exposed.has(name) && !exposed.has(name.replace(histogramSuffix, '')));
    expect(unknown).toEqual([]);
    // Every watched metric of the 002 spec has a panel.
    for (const name of [
      'skillsmith_catalog_dropped_entries',
      'skillsmith_skill_selection_rate',
      'skillsmith_skill_loads',
      'skillsmith_skill_load_completion_vs_baseline',
      'skillsmith_skill_revisions_30d',
      'skillsmith_authoring_conflict_rate',
      'skillsmith_authoring_denials',
      'skillsmith_approval_latency_p50_seconds',
      'skillsmith_eval_delta',
    ]) {
      expect(queried, name).toContain(name);
    }
    expect(dashboard.templating.list.map((variable) => variable.name)).toEqual(['datasource', 'tenant']);
  });
});
