/**
 * Writes seeded synthetic run reports as JSONL (one run report per line).
 *
 *   node --import tsx bench/generate-traces.ts --runs 100000 --seed 1 --out /tmp/runs.jsonl \
 *     [--tenant acme] [--labels /tmp/labels.jsonl]
 *
 * Without --tenant the lines omit tenantId (so `skillsmith ingest --tenant T` can place them).
 * --labels writes `{"runId", "family"}` per line for clustering-quality benchmarks.
 */
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { parseArgs } from 'node:util';
import { iterateRuns } from '../src/demo/synthetic-runs.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '1000' },
    seed: { type: 'string', default: '1' },
    out: { type: 'string' },
    tenant: { type: 'string' },
    labels: { type: 'string' },
  },
});

const runs = Number.parseInt(values.runs, 10);
const seed = Number.parseInt(values.seed, 10);
if (!Number.isSafeInteger(runs) || runs < 0) throw new Error(`--runs must be a non-negative integer, got ${values.runs}`);
if (!Number.isSafeInteger(seed)) throw new Error(`--seed must be an integer, got ${values.seed}`);
if (values.out === undefined) throw new Error('--out FILE is required');

async function write(stream: WriteStream, line: string): Promise<void> {
  if (!stream.write(line)) await once(stream, 'drain');
}

async function close(stream: WriteStream): Promise<void> {
  stream.end();
  await once(stream, 'finish');
}

const out = createWriteStream(values.out);
const labels = values.labels === undefined ? null : createWriteStream(values.labels);
const families = new Map<string, number>();
for (const { report, family } of iterateRuns({ seed, runs, ...(values.tenant === undefined ? {} : { tenantId: values.tenant }) })) {
  const { tenantId, ...withoutTenant } = report;
  await write(out, `${JSON.stringify(values.tenant === undefined ? withoutTenant : { tenantId, ...withoutTenant })}\n`);
  if (labels !== null) await write(labels, `${JSON.stringify({ runId: report.runId, family })}\n`);
  const label = family ?? '(distractor)';
  families.set(label, (families.get(label) ?? 0) + 1);
}
await close(out);
if (labels !== null) await close(labels);
process.stderr.write(`wrote ${runs} runs (seed ${seed}) to ${values.out}\n`);
for (const [family, count] of [...families].sort()) process.stderr.write(`  ${family}: ${count}\n`);
