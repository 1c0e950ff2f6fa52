import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { TENANT_GAUGES } from '../../src/metrics/metrics-exposition.ts';
import { createProcessMetrics } from '../../src/metrics/process-metrics.ts';

/**
 * deploy/ and docker-compose.yml are not exercised here (no Docker engine): they are parsed, and
 * what they say is checked against the code — the ports Prometheus scrapes are the ones the
 * services serve, and every skillsmith_* series the dashboard queries is one /metrics exposes.
 */
const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

interface ComposeService {
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
  const compose = parse(read('docker-compose.yml')) as { services: Record<string, ComposeService>; volumes: Record<string, unknown> };
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
    expect(api.static_configs![0]!.targets).toEqual(['api:8080']);
    expect(compose.services.api!.ports).toContain('8080:8080');
    const worker = jobs.get('skillsmith-worker')!;
    expect(worker.dns_sd_configs![0]).toMatchObject({ names: ['worker'], type: 'A' });
    expect(String(worker.dns_sd_configs![0]!.port)).toBe(compose.services.worker!.environment!.SKILLSMITH_WORKER_METRICS_PORT);
    expect(compose.services.worker!.environment!.SKILLSMITH_WORKER_METRICS_HOST).toBe('0.0.0.0');
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
