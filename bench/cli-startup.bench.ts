/**
 * CLI start-up: the wall time of `node bin/skillsmith.js --help`, `--version`, one database-only
 * command (`procedures --json`, against an embedded PGlite this process serves) and `recall`
 * against a running stack (this process serves the stack's HTTP API with the test model loaded
 * and warm, its stack file and local secret under a temporary SKILLSMITH_HOME), and `recall
 * --local` (the model loaded in the CLI process) beside it, median of N runs
 * each, with the process's CPU time (user + system, from GNU time): on a shared machine the wall
 * time mostly measures the other jobs, the CPU time what start-up costs. Several builds can be compared in one run (`--bin before=/path/to/bin/skillsmith.js`); their
 * runs alternate, so neither gets a systematically quieter machine. Each build needs `npm run build`.
 *
 * The recall goal matches nothing (the tenant has no procedures): what is measured is the start-up,
 * the embedding of one goal and one recall query, which a recall that finds skills pays too.
 *
 *   node --import tsx bench/cli-startup.bench.ts [--runs 15] [--only recall] [--bin label=path ...]
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createLocalSecret } from '../src/api/local-token.ts';
import { startApiServer } from '../src/api/server.ts';
import { createServices } from '../src/app/services.ts';
import { loadConfig } from '../src/app/config.ts';
import { ensureEmbeddingModel } from '../src/embedding/goal-embedding-repository.ts';
import { startEmbeddedPostgres } from '../src/infra/embedded-postgres.ts';
import { createLogger } from '../src/logging/logger.ts';
import { writeLocalSecret, writeStackFile } from '../src/cli/stack-file.ts';
import { createPool } from '../src/store/database.ts';
import { migrate } from '../src/store/migrations.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '15' },
    only: { type: 'string' },
    bin: { type: 'string', multiple: true, default: ['current=bin/skillsmith.js'] },
  },
});
const runs = Number(values.runs);
const bins = values.bin.map((entry) => {
  const [label, path] = entry.split('=');
  if (!label || !path) throw new Error(`--bin ${entry}: expected label=path`);
  return { label, path };
});

interface Timing {
  wallMs: number;
  cpuMs: number;
}

/** Wall and CPU milliseconds of one `node ARGS` process, from spawn to exit; a non-zero exit is an error. */
function timeNode(args: string[], env: NodeJS.ProcessEnv): Promise<Timing> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/time', ['-f', 'cpu %U %S', process.execPath, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
      const cpu = /cpu ([\d.]+) ([\d.]+)\s*$/.exec(stderr);
      if (code === 0 && cpu) resolve({ wallMs, cpuMs: (Number(cpu[1]) + Number(cpu[2])) * 1000 });
      else reject(new Error(`node ${args.join(' ')} exited ${code}: ${stderr.trim()}`));
    });
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function describe(timings: Timing[]): string {
  const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  return `${seconds(median(timings.map((timing) => timing.wallMs)))}, CPU ${seconds(median(timings.map((timing) => timing.cpuMs)))}`;
}

const database = await startEmbeddedPostgres();
const setup = createPool(database.url);
await migrate(setup);
// The tenant is embedded with the test model, so every command on it uses that model with nothing set.
await ensureEmbeddingModel(setup, 'bench', { modelId: 'sentence-transformers/all-MiniLM-L6-v2', dimension: 384 });
await setup.end();

// A running stack, as far as the CLI can tell: its HTTP API (model loaded and warm), its stack file, its local secret.
const home = await mkdtemp(join(tmpdir(), 'skillsmith-cli-bench-'));
const modelDir = resolve('.skillsmith/models');
const stackConfig = loadConfig({
  SKILLSMITH_HOME: home,
  SKILLSMITH_MODEL_DIR: modelDir,
  SKILLSMITH_API_PORT: '0',
  SKILLSMITH_LOG_LEVEL: 'warn',
});
const apiPool = createPool(database.url);
const services = createServices(stackConfig, apiPool, { logger: createLogger('warn') });
await services.recall('bench', { goal: 'warm the model', topK: 2 });
const localSecret = createLocalSecret();
const api = await startApiServer({ ...services, localSecret });
await writeLocalSecret(home, localSecret);
await writeStackFile(home, {
  pid: process.pid,
  startedAt: new Date().toISOString(),
  temporalAddress: '127.0.0.1:7233',
  temporalUiUrl: null,
  namespace: 'default',
  taskQueue: 'skillsmith',
  databaseUrl: database.url,
  embeddedDatabase: true,
  database: 'pglite',
  apiUrl: api.url,
});

const env: NodeJS.ProcessEnv = {
  ...process.env,
  DATABASE_URL: database.url,
  SKILLSMITH_HOME: home,
  SKILLSMITH_MODEL_DIR: modelDir,
  SKILLSMITH_LOG_LEVEL: 'warn',
};
for (const name of Object.keys(env)) if (/^SKILLSMITH_(EMBEDDING|RECALL|SIMILARITY|CLUSTER)_/.test(name)) delete env[name];
const recall = ['recall', 'export the May invoices of Globex to a spreadsheet', '--tenant', 'bench', '--json'];
const commands = [['--help'], ['--version'], ['procedures', '--tenant', 'bench', '--json'], recall, [...recall, '--local']].filter(
  (args) => values.only === undefined || args[0] === values.only,
);
try {
  console.log(
    `${runs} runs per command and build, alternating; load average at start ${loadavg()
      .map((load) => load.toFixed(1))
      .join(' ')}`,
  );
  const bare: Timing[] = [];
  for (let run = 0; run < runs; run++) bare.push(await timeNode(['-e', '0'], env));
  console.log(`node -e 0: median ${describe(bare)}\n`);
  console.log(`| command (median wall, CPU) | ${bins.map((bin) => bin.label).join(' | ')} |\n|---|${bins.map(() => '---|').join('')}`);
  for (const args of commands) {
    const times = bins.map(() => [] as Timing[]);
    for (let run = 0; run < runs; run++) {
      for (const [index, bin] of bins.entries()) times[index]!.push(await timeNode([bin.path, ...args], env));
    }
    console.log(`| \`skillsmith ${args.join(' ')}\` | ${times.map(describe).join(' | ')} |`);
  }
  console.log(
    `\nload average at end ${loadavg()
      .map((load) => load.toFixed(1))
      .join(' ')}`,
  );
} finally {
  await api.close();
  await apiPool.end();
  await database.stop();
  await rm(home, { recursive: true, force: true });
}
