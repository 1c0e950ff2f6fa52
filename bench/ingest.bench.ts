/**
 * Ingestion benchmark: runs/s and peak RSS of `ingestJsonlFile` (the code behind
 * `skillsmith ingest`) for generated JSONL files of 10k and 100k runs, against an embedded
 * PGlite served over the wire protocol.
 *
 *   /usr/bin/time -v node --import tsx bench/ingest.bench.ts [--sizes 10000,100000] [--seed 1]
 *                    [--data-dir DIR] [--reingest]
 *
 * Layout, so that each figure measures one thing:
 *   - this process orchestrates: generates the files (streamed) and prints the figures;
 *   - a child process runs the database (PGlite's memory grows with the data it holds);
 *   - one child process per file runs the ingest, and reports its own peak RSS
 *     (getrusage maxrss) plus RSS sampled every 200 ms. A flat peak from 10k to 100k runs
 *     shows ingestion streams rather than loads the file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startEmbeddedPostgres } from '../src/infra/embedded-postgres.ts';
import { ingestJsonlFile } from '../src/runs/jsonl-ingest.ts';
import { createPool } from '../src/store/database.ts';
import { migrate } from '../src/store/migrations.ts';
import { iterateRuns } from '../src/demo/synthetic-runs.ts';

const { values } = parseArgs({
  options: {
    role: { type: 'string', default: 'orchestrate' },
    sizes: { type: 'string', default: '10000,100000' },
    seed: { type: 'string', default: '1' },
    'data-dir': { type: 'string' },
    reingest: { type: 'boolean', default: false },
    file: { type: 'string' },
    url: { type: 'string' },
    tenant: { type: 'string' },
  },
});

const mebibytes = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;

interface IngestFigures {
  tenant: string;
  lines: number;
  inserted: number;
  unchanged: number;
  invalid: number;
  seconds: number;
  runsPerSecond: number;
  peakRssMiB: number;
  rssSamplesMiB: number[];
}

/** Child role: ingest one file and print its figures as one JSON line. */
async function runIngest(file: string, url: string, tenant: string): Promise<void> {
  const samples: number[] = [];
  const sampler = setInterval(() => samples.push(process.memoryUsage().rss), 200);
  const pool = createPool(url, { max: 2 });
  const started = performance.now();
  const result = await ingestJsonlFile(pool, file, { tenantId: tenant });
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  await pool.end();
  // Ten evenly spaced samples are enough to see the curve.
  const step = Math.max(1, Math.floor(samples.length / 10));
  const figures: IngestFigures = {
    tenant,
    lines: result.lines,
    inserted: result.inserted,
    unchanged: result.unchanged,
    invalid: result.invalid,
    seconds: Math.round(seconds * 10) / 10,
    runsPerSecond: Math.round((result.inserted + result.unchanged) / seconds),
    peakRssMiB: mebibytes(process.resourceUsage().maxRSS * 1024),
    rssSamplesMiB: samples.filter((_, index) => index % step === 0).map(mebibytes),
  };
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}

/** Child role: serve an embedded PGlite until stdin closes. */
async function runDatabase(dataDir: string | undefined): Promise<void> {
  const database = await startEmbeddedPostgres({ ...(dataDir === undefined ? {} : { dataDir }), maxConnections: 8 });
  process.stdout.write(`${JSON.stringify({ url: database.url })}\n`);
  process.stdin.resume();
  await once(process.stdin, 'end');
  process.stderr.write(`database peak RSS ${mebibytes(process.resourceUsage().maxRSS * 1024)} MiB\n`);
  await database.stop();
}

const self = fileURLToPath(import.meta.url);

function spawnRole(args: string[], stdin: 'pipe' | 'ignore'): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', self, ...args], { stdio: [stdin, 'pipe', 'inherit'] });
}

async function firstLine(child: ChildProcess): Promise<string> {
  if (child.stdout === null) throw new Error('child has no stdout');
  const lines = createInterface({ input: child.stdout });
  for await (const line of lines) return line;
  throw new Error('child exited without output');
}

async function writeRuns(file: string, runs: number, seed: number): Promise<void> {
  const out: WriteStream = createWriteStream(file);
  for (const { report } of iterateRuns({ seed, runs })) {
    const { tenantId: _tenantId, ...line } = report;
    if (!out.write(`${JSON.stringify(line)}\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

async function ingestInChild(file: string, url: string, tenant: string): Promise<IngestFigures> {
  const child = spawnRole(['--role', 'ingest', '--file', file, '--url', url, '--tenant', tenant], 'ignore');
  const line = await firstLine(child);
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`ingest child exited with ${code}`);
  return JSON.parse(line) as IngestFigures;
}

async function orchestrate(): Promise<void> {
  const sizes = values.sizes.split(',').map((size) => Number.parseInt(size, 10));
  const seed = Number.parseInt(values.seed, 10);
  const directory = await mkdtemp(join(tmpdir(), 'skillsmith-ingest-bench-'));
  const database = spawnRole(['--role', 'database', ...(values['data-dir'] ? ['--data-dir', values['data-dir']] : [])], 'pipe');
  try {
    const { url } = JSON.parse(await firstLine(database)) as { url: string };
    const pool = createPool(url, { max: 1 });
    await migrate(pool);
    await pool.end();
    console.log(
      `database: embedded PGlite (${values['data-dir'] ? `data dir ${values['data-dir']}` : 'in memory'}), Node ${process.version}`,
    );
    for (const size of sizes) {
      const file = join(directory, `runs-${size}.jsonl`);
      const generationStarted = performance.now();
      await writeRuns(file, size, seed);
      const bytes = (await stat(file)).size;
      console.log(
        `\n${size} runs: generated ${mebibytes(bytes)} MiB of JSONL in ${((performance.now() - generationStarted) / 1000).toFixed(1)} s`,
      );
      const first = await ingestInChild(file, url, `bench-${size}`);
      console.log(
        `  ingest:    ${first.inserted} inserted in ${first.seconds} s = ${first.runsPerSecond} runs/s; peak RSS ${first.peakRssMiB} MiB`,
      );
      console.log(`             RSS samples (MiB): ${first.rssSamplesMiB.join(' ')}`);
      if (values.reingest) {
        const again = await ingestInChild(file, url, `bench-${size}`);
        console.log(
          `  re-ingest: ${again.unchanged} unchanged, ${again.inserted} inserted in ${again.seconds} s = ${again.runsPerSecond} runs/s; peak RSS ${again.peakRssMiB} MiB`,
        );
      }
      await rm(file);
    }
  } finally {
    database.stdin?.end();
    await once(database, 'exit');
    await rm(directory, { recursive: true, force: true });
  }
}

if (values.role === 'ingest') {
  if (!values.file || !values.url || !values.tenant) throw new Error('--role ingest needs --file, --url and --tenant');
  await runIngest(values.file, values.url, values.tenant);
} else if (values.role === 'database') {
  await runDatabase(values['data-dir']);
} else {
  await orchestrate();
}
