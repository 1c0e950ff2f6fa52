/**
 * The fault suite (issue #12 item 7), run by hand against the default stack: `skillsmith up`
 * (native PostgreSQL + Temporal dev server + worker + API) in a fresh SKILLSMITH_HOME, started
 * and killed as a child process like a user's terminal would. Needs `npm run build` (the stack
 * and the workers run dist/) and the test model (`skillsmith models pull`).
 *
 *   nice -n 10 node --import tsx bench/faults.ts [--only hammer,worker-kill,db-restart,up-kill]
 *     [--hammer-rounds 3] [--kill-rounds 10] [--runs 1000] [--ingest-runs 5000] [--posts 2000]
 *     [--intake-rate 100] [--intake-seconds 30] [--db-down-seconds 5]
 *
 * - hammer: per round, at once: 32 concurrent `POST /v1/runs`, recalls, session opens + skill
 *   loads, `GET /v1/skills`, a CLI ingest of --ingest-runs runs and a full pass (CLI). Every
 *   answer is checked against the database: each 202'd run is stored, each recalled, pinned or
 *   loaded skill revision exists in the tenant, the skills list equals the tenant's active rows.
 * - worker-kill: three `skillsmith worker` processes on a queue of their own; per round a full
 *   pass over the same runs, and the worker holding one of its activities (during embed, or
 *   during distil/install, alternately) is SIGKILLed and replaced. Each round's skills (names,
 *   revisions, counts, provenance, SKILL.md sha256) must equal an undisturbed pass's, with every
 *   skill's stored revisions exactly 1..n.
 * - db-restart: the stack's PostgreSQL stopped (pg_ctl -m fast) while the stack's worker embeds
 *   a pass, started again --db-down-seconds later; the pass must complete (and equal the
 *   undisturbed pass when worker-kill ran).
 * - up-kill: --intake-rate reports/s offered to `POST /v1/runs` for --intake-seconds; `up` is
 *   SIGKILLed a third of the way in and started again at once; every 202'd runId must be stored.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { writeFile, readFile, appendFile } from 'node:fs/promises';
import { availableParallelism, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import type pg from 'pg';
import { passResult, queryPassProgress, startSynthesisPass } from '../src/client/synthesis-client.ts';
import { freePort } from '../src/infra/temporal-dev-server.ts';
import { nativePostgresDir, provisionNativePostgres, NATIVE_POSTGRES_USER } from '../src/infra/native-postgres.ts';
import { upsertRuns } from '../src/runs/run-repository.ts';
import { generateRuns, iterateRuns } from '../src/demo/synthetic-runs.ts';
import { stackFileSchema, type StackFile } from '../src/cli/stack-file.ts';
import { createPool } from '../src/store/database.ts';
import type { PassRecord } from '../src/contracts/pass-record.ts';
import { childEnvironment } from '../test/support/child-environment.ts';
import { runSkillsmith } from '../test/support/cli.ts';
import { killProcess, passSkills, revisionGaps, startWorkerProcess, type PassSkill } from '../test/support/pass-faults.ts';
import { offerPaced } from './paced-senders.ts';
import { createStackHome } from '../test/support/stack-home.ts';
import { testModelDir } from '../test/support/test-model.ts';
import { until } from '../test/support/until.ts';

const { values } = parseArgs({
  options: {
    only: { type: 'string', default: 'hammer,worker-kill,db-restart,up-kill' },
    'hammer-rounds': { type: 'string', default: '3' },
    'kill-rounds': { type: 'string', default: '10' },
    runs: { type: 'string', default: '1000' },
    'ingest-runs': { type: 'string', default: '5000' },
    posts: { type: 'string', default: '2000' },
    'intake-rate': { type: 'string', default: '100' },
    'intake-seconds': { type: 'string', default: '30' },
    'db-down-seconds': { type: 'string', default: '5' },
  },
});
const scenarios = new Set(values.only.split(','));
const RUNS = Number(values.runs);
const bin = fileURLToPath(new URL('../bin/skillsmith.js', import.meta.url));
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
const load = () => loadavg()[0]!.toFixed(1);
const seconds = (since: number) => ((performance.now() - since) / 1000).toFixed(1);
const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);

/** The settings every process of the suite shares: the registry-shipped test model, the extractive distiller. */
const modelEnv = {
  SKILLSMITH_EMBEDDING_MODEL: 'sentence-transformers/all-MiniLM-L6-v2',
  SKILLSMITH_EMBEDDING_PREFIXES: 'none',
  SKILLSMITH_MODEL_DIR: testModelDir,
  SKILLSMITH_SIMILARITY_TAU: '0.5',
  SKILLSMITH_DISTILLER: 'extractive',
};
const ALL_SCOPES = ['run.write', 'recall.read', 'session.write', 'session.read', 'skill.read'];
const tokens = {
  hammer: 'faults-hammer-token-0123456789',
  intake: 'faults-intake-token-0123456789',
};

const stackHome = await createStackHome();
const env: Record<string, string> = {
  SKILLSMITH_HOME: stackHome.home,
  SKILLSMITH_POSTGRES_PORT: String(await freePort()),
  SKILLSMITH_TEMPORAL_PORT: String(await freePort()),
  SKILLSMITH_TEMPORAL_UI_PORT: String(await freePort()),
  SKILLSMITH_API_PORT: String(await freePort()),
  TEMPORAL_CLI_PATH: process.env.TEMPORAL_CLI_PATH ?? resolve('.skillsmith/bin/temporal-1.9.1'),
  SKILLSMITH_API_TOKENS: JSON.stringify(
    Object.entries(tokens).map(([tenantId, token]) => ({ token, tenantId, principal: `faults-${tenantId}`, scopes: ALL_SCOPES })),
  ),
  ...modelEnv,
};

let upCount = 0;
/** `skillsmith up` in the background; resolves once its stack file names it and /readyz answers 200. */
async function startUp(): Promise<{ up: ChildProcess; stack: StackFile }> {
  upCount += 1;
  const logFile = join(stackHome.home, `up-${upCount}.log`);
  const up = spawn(process.execPath, [bin, 'up'], {
    env: childEnvironment({ NODE_NO_WARNINGS: '1', ...env }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  up.stderr.on('data', (chunk: Buffer) => void appendFile(logFile, chunk));
  const started = performance.now();
  const stack = await until(
    `the stack file of up #${upCount} (log: ${logFile})`,
    async () => {
      if (up.exitCode !== null) return null;
      const parsed = stackFileSchema.parse(JSON.parse(await readFile(join(stackHome.home, 'stack.json'), 'utf8')));
      return parsed.pid === up.pid ? parsed : undefined;
    },
    { timeoutMs: 300_000, intervalMs: 250, retryErrors: true },
  );
  if (stack === null)
    throw new Error(
      `up #${upCount} exited ${up.exitCode} before it was ready: ${(await readFile(logFile, 'utf8').catch(() => '')).slice(-500)}`,
    );
  await until('/readyz to answer 200', async () => ((await fetch(`${stack.apiUrl}/readyz`)).status === 200 ? true : undefined), {
    timeoutMs: 120_000,
    intervalMs: 250,
    retryErrors: true,
  });
  log(`up #${upCount} ready in ${seconds(started)} s (pid ${up.pid}, database ${stack.database})`);
  return { up, stack };
}

/** One request with the tenant's token; a connection that fails answers status 0 (the stack is down), never throws. */
const api =
  (stack: StackFile, token: string) =>
  async (method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> => {
    try {
      const response = await fetch(`${stack.apiUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      try {
        return { status: response.status, json: JSON.parse(text) as Record<string, unknown> };
      } catch {
        return { status: response.status, json: { text } };
      }
    } catch (error) {
      return { status: 0, json: { error: String(((error as Error).cause as Error | undefined)?.message ?? (error as Error).message) } };
    }
  };

async function seed(pool: pg.Pool, tenantId: string, seedValue: number, runs: number): Promise<void> {
  const reports = generateRuns({ seed: seedValue, runs }).map(({ report }) => ({ ...report, tenantId }));
  for (let start = 0; start < reports.length; start += 500) await upsertRuns(pool, tenantId, reports.slice(start, start + 500));
}

const countOf = async (pool: pg.Pool, sql: string, parameters: unknown[]) => (await pool.query(sql, parameters)).rows[0].n as number;

/** Sends every item with `concurrency` senders (at `rate` per second in total when given). */
const offer = <T>(items: T[], concurrency: number, send: (item: T) => Promise<void>, rate?: number) =>
  offerPaced(items.length, { concurrency, rate }, (index) => send(items[index]!));

interface Tally {
  requests: number;
  errors: number;
  wrong: number;
  notes: string[];
}
const tally = (): Tally => ({ requests: 0, errors: 0, wrong: 0, notes: [] });
const note = (t: Tally, kind: 'errors' | 'wrong', what: string) => {
  t[kind] += 1;
  if (t.notes.length < 5) t.notes.push(what);
};
const summary = (name: string, t: Tally) =>
  `${name}: ${t.requests} requests, ${t.errors} errors, ${t.wrong} wrong${t.notes.length ? ` (first: ${t.notes.join(' | ')})` : ''}`;

/** How far each `up` log has been read: every scenario reports what the stack logged at warn or above meanwhile. */
const logOffsets = new Map<string, number>();
async function stackLogSince(): Promise<string> {
  const counts = new Map<string, number>();
  for (let index = 1; index <= upCount; index += 1) {
    const file = join(stackHome.home, `up-${index}.log`);
    const text = await readFile(file, 'utf8').catch(() => '');
    const from = logOffsets.get(file) ?? 0;
    logOffsets.set(file, text.length);
    for (const line of text.slice(from).split('\n')) {
      if (!line.trim()) continue;
      let entry: { level?: number; msg?: string; err?: { message?: string } };
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        entry = { level: 50, msg: line.slice(0, 120) };
      }
      if ((entry.level ?? 0) < 40) continue;
      // One line per kind: ids, names and counts vary between otherwise equal messages.
      const message = (entry.msg ?? '')
        .replace(/^\[(TMPRL\d+)\] \S+/, '[$1] …')
        .replace(/^procedure \S+ disabled: .*/, 'procedure … disabled (its observed success rate fell below the minimum)');
      const key = `${entry.level === 40 ? 'warn' : 'error'} "${message}"${entry.err?.message ? `: ${entry.err.message.slice(0, 100)}` : ''}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  }
  return counts.size === 0
    ? 'the stack logged no warning or error'
    : `the stack logged ${[...counts].map(([key, n]) => `${n}× ${key}`).join('; ')}`;
}

const results: string[] = [];
let { up, stack } = await startUp();
const pool = createPool(stack.databaseUrl, { max: 4 });
const connection = await Connection.connect({ address: stack.temporalAddress });
const client = new Client({ connection, namespace: stack.namespace });
const cliEnv = { SKILLSMITH_HOME: stackHome.home, ...modelEnv };
let baseline: { skills: PassSkill[]; counts: PassRecord['counts'] } | undefined;
const withoutTenant = (skills: PassSkill[]) => JSON.stringify(skills);
log(`cores ${availableParallelism()}, load average ${load()}, home ${stackHome.home}`);

try {
  if (scenarios.has('hammer')) {
    const rounds = Number(values['hammer-rounds']);
    const ingestRuns = Number(values['ingest-runs']);
    const posts = Number(values.posts);
    let started = performance.now();
    await seed(pool, 'hammer', 21, RUNS);
    await seed(pool, 'hammer-pass', 22, RUNS);
    const learned = await passResult(await startSynthesisPass(client, { tenantId: 'hammer', full: true, taskQueue: stack.taskQueue }));
    if (learned.status !== 'completed') throw new Error(`the hammer tenant's pass ${learned.status}`);
    const names = (
      await pool.query<{ name: string }>(
        `SELECT DISTINCT name FROM skill_revisions WHERE tenant_id = 'hammer' AND status = 'active' ORDER BY name LIMIT 8`,
      )
    ).rows.map((row) => row.name);
    if (names.length === 0) throw new Error('the hammer tenant learned no skill');
    const agent = await runSkillsmith(['agents', 'set', 'faults-bot', '--skills', names.join(','), '--tenant', 'hammer'], cliEnv);
    if (agent.code !== 0) throw new Error(`agents set: ${agent.stderr}`);
    log(`hammer: tenant seeded with ${RUNS} runs, ${names.length}+ skills learned, in ${seconds(started)} s`);
    const call = api(stack, tokens.hammer);
    const goals = generateRuns({ seed: 23, runs: 200 }).map(({ report }) => report.goal);
    /** The tenant's active revisions: what every skill in an answer must be one of. */
    const activeRevisions = async () =>
      new Map(
        (
          await pool.query<{ name: string; revision: number; content_sha256: string }>(
            `SELECT DISTINCT ON (name) name, revision, content_sha256 FROM skill_revisions WHERE tenant_id = 'hammer' AND status = 'active' ORDER BY name, revision DESC`,
          )
        ).rows.map((row) => [row.name, row]),
      );
    const revisionExists = async (name: string, revision: number, sha?: string) =>
      (
        await pool.query(
          `SELECT 1 FROM skill_revisions WHERE tenant_id = 'hammer' AND name = $1 AND revision = $2 AND ($3::text IS NULL OR content_sha256 = $3)`,
          [name, revision, sha ?? null],
        )
      ).rowCount === 1;

    for (let round = 1; round <= rounds; round += 1) {
      const ingestTenant = `hammer-ingest-${round}`;
      const file = join(stackHome.home, `ingest-${round}.jsonl`);
      await writeFile(
        file,
        [...iterateRuns({ seed: 40 + round, runs: ingestRuns, tenantId: ingestTenant })]
          .map(({ report }) => JSON.stringify(report))
          .join('\n') + '\n',
      );
      const reports = generateRuns({ seed: 60 + round, runs: posts, tenantId: 'hammer' }).map(({ report }) => ({
        ...report,
        runId: `hammer-${round}-${report.runId}`,
      }));
      const t = { runs: tally(), recall: tally(), sessions: tally(), skills: tally() };
      const accepted: string[] = [];
      let busy = true;
      started = performance.now();
      const loadAtStart = load();
      const ingest = runSkillsmith(['ingest', file, '--tenant', ingestTenant, '--json'], cliEnv, 900_000);
      const pass = runSkillsmith(['synthesize', '--full', '--wait', '--json', '--tenant', 'hammer-pass'], cliEnv, 900_000);
      const background = Promise.all([ingest, pass]).finally(() => (busy = false));
      const loop = (workers: number, body: () => Promise<void>) =>
        Promise.all(
          Array.from({ length: workers }, async () => {
            while (busy) await body();
          }),
        );
      let goalIndex = 0;
      const recalls = loop(4, async () => {
        const goal = goals[goalIndex++ % goals.length]!;
        t.recall.requests += 1;
        const { status, json } = await call('GET', `/v1/recall?goal=${encodeURIComponent(goal)}&topK=5`);
        if (status !== 200) return note(t.recall, 'errors', `${status} ${JSON.stringify(json).slice(0, 200)}`);
        for (const skill of (json.skills ?? []) as Array<{ name: string; revision: number }>) {
          if (!(await revisionExists(skill.name, skill.revision)))
            note(t.recall, 'wrong', `recalled ${skill.name}@${skill.revision} not in the tenant`);
        }
      });
      const sessions = loop(2, async () => {
        t.sessions.requests += 1;
        const opened = await call('POST', '/v1/sessions', { agentId: 'faults-bot', tools: [] });
        if (opened.status !== 201) return note(t.sessions, 'errors', `open ${opened.status} ${JSON.stringify(opened.json).slice(0, 200)}`);
        const session = opened.json as { id: string; agentId: string; pins: Array<{ name: string; revision: number; source: string }> };
        if (session.agentId !== 'faults-bot' || session.pins.length === 0)
          return note(t.sessions, 'wrong', `open answered ${JSON.stringify(session).slice(0, 200)}`);
        const stored = await pool.query(`SELECT 1 FROM sessions WHERE tenant_id = 'hammer' AND id = $1`, [session.id]);
        if (stored.rowCount !== 1) note(t.sessions, 'wrong', `session ${session.id} not stored in the tenant`);
        for (const pin of session.pins) {
          if (pin.source !== 'mcp' && !(await revisionExists(pin.name, pin.revision)))
            note(t.sessions, 'wrong', `pinned ${pin.name}@${pin.revision} not in the tenant`);
        }
        const pin = session.pins[t.sessions.requests % session.pins.length]!;
        t.sessions.requests += 1;
        const loaded = await call('POST', `/v1/sessions/${session.id}/skills/load`, { name: pin.name });
        if (loaded.status !== 200) return note(t.sessions, 'errors', `load ${loaded.status} ${JSON.stringify(loaded.json).slice(0, 200)}`);
        const body = loaded.json as { name: string; revision: number; content: string };
        const row = (
          await pool.query<{ body: string }>(
            `SELECT body FROM skill_revisions WHERE tenant_id = 'hammer' AND name = $1 AND revision = $2`,
            [pin.name, pin.revision],
          )
        ).rows[0];
        if (body.name !== pin.name || body.revision !== pin.revision || !row || !body.content.includes(row.body.slice(0, 200)))
          note(t.sessions, 'wrong', `load of ${pin.name}@${pin.revision} answered ${body.name}@${body.revision}`);
      });
      const lists = loop(1, async () => {
        t.skills.requests += 1;
        const { status, json } = await call('GET', '/v1/skills?limit=1000');
        if (status !== 200) return note(t.skills, 'errors', `${status} ${JSON.stringify(json).slice(0, 200)}`);
        const listed = (json.skills ?? []) as Array<{ name: string; revision: number; contentSha256: string }>;
        const rows = await activeRevisions();
        const matches =
          listed.length === rows.size && listed.every((skill) => rows.get(skill.name)?.content_sha256 === skill.contentSha256);
        if (!matches) note(t.skills, 'wrong', `listed ${listed.length} skills, the tenant has ${rows.size} active`);
      });
      await offer(reports, 32, async (report) => {
        t.runs.requests += 1;
        const { status, json } = await call('POST', '/v1/runs', report);
        if (status !== 202) return note(t.runs, 'errors', `${status} ${JSON.stringify(json).slice(0, 200)}`);
        if (json.runId !== report.runId) return note(t.runs, 'wrong', `202 for ${report.runId} named ${String(json.runId)}`);
        accepted.push(report.runId);
      });
      const [ingested, passed] = await background;
      await Promise.all([recalls, sessions, lists]);
      const seconds_ = seconds(started);
      const stored = new Set(
        (
          await pool.query<{ run_id: string }>(`SELECT run_id FROM runs WHERE tenant_id = 'hammer' AND run_id LIKE $1`, [
            `hammer-${round}-%`,
          ])
        ).rows.map((row) => row.run_id),
      );
      for (const runId of accepted) if (!stored.has(runId)) note(t.runs, 'wrong', `202'd ${runId} not stored`);
      const ingestRows = await countOf(pool, 'SELECT count(*)::int AS n FROM runs WHERE tenant_id = $1', [ingestTenant]);
      const passJson = JSON.parse(passed.stdout || '{}') as { status?: string };
      const cli = tally();
      cli.requests = 2;
      if (ingested.code !== 0) note(cli, 'errors', `ingest exit ${ingested.code}: ${ingested.stderr.slice(0, 300)}`);
      else if (ingestRows !== ingestRuns) note(cli, 'wrong', `ingest stored ${ingestRows}/${ingestRuns}`);
      if (passed.code !== 0 || passJson.status !== 'completed')
        note(cli, 'errors', `pass exit ${passed.code} ${passJson.status}: ${passed.stderr.slice(0, 300)}`);
      const all = [t.runs, t.recall, t.sessions, t.skills, cli];
      const line =
        `hammer round ${round}/${rounds} (load ${loadAtStart} at start, ${seconds_} s): ` +
        `${summary('POST /v1/runs', t.runs)} (${accepted.length} accepted, all checked stored); ${summary('recall', t.recall)}; ` +
        `${summary('sessions open+load', t.sessions)}; ${summary('GET /v1/skills', t.skills)}; ` +
        `${summary('CLI ingest + pass', cli)} (ingest ${ingestRows} rows, pass ${passJson.status ?? 'none'}) — ` +
        `total errors ${all.reduce((n, x) => n + x.errors, 0)}, wrong ${all.reduce((n, x) => n + x.wrong, 0)}; ${await stackLogSince()}`;
      log(line);
      results.push(line);
    }
  }

  if (scenarios.has('worker-kill')) {
    const rounds = Number(values['kill-rounds']);
    const queue = `faults-kill-${Date.now()}`;
    const workerEnv = { DATABASE_URL: stack.databaseUrl, TEMPORAL_ADDRESS: stack.temporalAddress, TEMPORAL_TASK_QUEUE: queue, ...modelEnv };
    const workers = [startWorkerProcess(workerEnv), startWorkerProcess(workerEnv), startWorkerProcess(workerEnv)];
    try {
      let started = performance.now();
      await seed(pool, 'kill-base', 21, RUNS);
      const base = await passResult(await startSynthesisPass(client, { tenantId: 'kill-base', full: true, taskQueue: queue }));
      if (base.status !== 'completed') throw new Error(`the undisturbed pass ${base.status}`);
      baseline = { skills: await passSkills(pool, 'kill-base'), counts: base.counts };
      log(
        `worker-kill: undisturbed pass over ${RUNS} runs on 3 workers in ${seconds(started)} s: ${JSON.stringify(base.counts)}, ${baseline.skills.length} skills`,
      );
      let identical = 0;
      let holders = 0;
      let gaps = 0;
      for (let round = 1; round <= rounds; round += 1) {
        const tenantId = `kill-${round}`;
        await seed(pool, tenantId, 21, RUNS);
        started = performance.now();
        const handle = await startSynthesisPass(client, { tenantId, full: true, taskQueue: queue });
        const stage = round % 2 === 1 ? 'embed' : 'distil';
        if (stage === 'embed') {
          await until(
            'the embed step to be writing',
            async () =>
              (await countOf(pool, 'SELECT count(*)::int AS n FROM goal_embeddings WHERE tenant_id = $1', [tenantId])) > 0
                ? true
                : undefined,
            { timeoutMs: 300_000, intervalMs: 50, retryErrors: true },
          );
        } else {
          await until(
            'a cluster to be installed',
            async () => {
              const progress = await queryPassProgress(handle);
              return progress.stage === 'distilling' && progress.clustersDone >= 1 ? true : undefined;
            },
            { timeoutMs: 300_000, intervalMs: 50, retryErrors: true },
          );
        }
        // The worker that holds one of the pass's activities now, if one does (else the round's own pick).
        const holder = await until('a worker to hold one of its activities', () => activityHolder(handle, workers), {
          timeoutMs: 15_000,
          intervalMs: 100,
          retryErrors: true,
        }).catch(() => undefined);
        const victim = holder ?? (round - 1) % workers.length;
        if (holder !== undefined) holders += 1;
        await killProcess(workers[victim]!);
        workers[victim] = startWorkerProcess(workerEnv);
        const record = await passResult(handle);
        const skills = await passSkills(pool, tenantId);
        const same =
          record.status === 'completed' &&
          JSON.stringify(record.counts) === JSON.stringify(baseline.counts) &&
          withoutTenant(skills) === withoutTenant(baseline.skills);
        const gapped = revisionGaps(skills).length;
        if (same) identical += 1;
        gaps += gapped;
        const retried = ((await handle.fetchHistory()).events ?? []).filter(
          (event) => (event.activityTaskStartedEventAttributes?.attempt ?? 0) > 1,
        ).length;
        log(
          `worker-kill round ${round}/${rounds}: killed during ${stage} the worker ${holder === undefined ? 'picked by the round (none held an activity of the parent or a cluster)' : 'holding an activity'}; ` +
            `pass ${record.status} in ${seconds(started)} s, ${retried} activity retries in the parent's history, identical to the undisturbed pass: ${same ? 'yes' : 'NO'}, skills with revisions not 1..n: ${gapped}`,
        );
      }
      const line = `worker-kill: ${rounds} rounds (SIGKILL of 1 of 3 workers, ${holders} of them the holder of a running activity): ${identical}/${rounds} identical to the undisturbed pass (skills, revisions, counts, SKILL.md sha256), ${gaps} duplicate or skipped revisions`;
      const reported = `${line}; ${await stackLogSince()}`;
      log(reported);
      results.push(reported);
    } finally {
      await Promise.all(workers.map(killProcess));
    }
  }

  if (scenarios.has('db-restart')) {
    const tenantId = 'db-restart';
    await seed(pool, tenantId, 21, RUNS);
    const started = performance.now();
    const handle = await startSynthesisPass(client, { tenantId, full: true, taskQueue: stack.taskQueue });
    await until(
      'the embed step to be writing',
      async () =>
        (await countOf(pool, 'SELECT count(*)::int AS n FROM goal_embeddings WHERE tenant_id = $1', [tenantId])) > 0 ? true : undefined,
      { timeoutMs: 300_000, intervalMs: 50, retryErrors: true },
    );
    const downSeconds = Number(values['db-down-seconds']);
    await pgCtl(['stop', '-m', 'fast', '-w', '-t', '30']);
    const downAt = performance.now();
    await sleep(500);
    const readyWhileDown = await fetch(`${stack.apiUrl}/readyz`).then(
      (response) => response.status,
      () => 0,
    );
    await sleep(Math.max(0, downSeconds * 1000 - 500));
    await pgCtl([
      'start',
      '-w',
      '-t',
      '60',
      '-l',
      join(nativePostgresDir(stackHome.home), 'server.log'),
      '-o',
      `-p ${new URL(stack.databaseUrl).port} -c listen_addresses=127.0.0.1 -k '' -c max_connections=100`,
    ]);
    log(`db-restart: PostgreSQL down for ${seconds(downAt)} s mid-embed (/readyz answered ${readyWhileDown} meanwhile)`);
    const record = await passResult(handle);
    const skills = await passSkills(pool, tenantId);
    const same = baseline
      ? withoutTenant(skills) === withoutTenant(baseline.skills) && JSON.stringify(record.counts) === JSON.stringify(baseline.counts)
      : undefined;
    const readyAfter = await until(
      '/readyz 200 after the restart',
      async () => ((await fetch(`${stack.apiUrl}/readyz`)).status === 200 ? true : undefined),
      {
        timeoutMs: 60_000,
        retryErrors: true,
      },
    ).then(
      () => 200,
      () => 'not 200 within 60 s',
    );
    const line =
      `db-restart: PostgreSQL stopped ${downSeconds} s mid-pass: pass ${record.status} in ${seconds(started)} s` +
      `${same === undefined ? '' : `, identical to the undisturbed pass: ${same ? 'yes' : 'NO'}`}, skills with revisions not 1..n: ${revisionGaps(skills).length}; ` +
      `/readyz ${readyWhileDown} while down, ${readyAfter} after; up still running: ${up.exitCode === null ? 'yes' : 'NO'}`;
    const reported = `${line}; ${await stackLogSince()}`;
    log(reported);
    results.push(reported);
  }

  if (scenarios.has('up-kill')) {
    const rate = Number(values['intake-rate']);
    const total = rate * Number(values['intake-seconds']);
    const reports = generateRuns({ seed: 80, runs: total, tenantId: 'intake' }).map(({ report }, index) => ({
      ...report,
      runId: `intake-${index}`,
    }));
    const accepted: string[] = [];
    let refused = 0;
    let sent = 0;
    const reasons = new Map<string, number>();
    const call = () => api(stack, tokens.intake);
    const killAt = total / 3;
    let restart: Promise<void> | undefined;
    const started = performance.now();
    const loadAtStart = load();
    await offer(
      reports,
      32,
      async (report) => {
        sent += 1;
        if (sent === Math.floor(killAt) && !restart) {
          restart = (async () => {
            await killProcess(up);
            log(`up-kill: up SIGKILLed after ${sent} reports offered`);
            ({ up, stack } = await startUp());
          })();
        }
        const { status, json } = await call()('POST', '/v1/runs', report);
        if (status === 202 && json.runId === report.runId) accepted.push(report.runId);
        else {
          refused += 1;
          const reason = `${status} ${JSON.stringify(json).slice(0, 80)}`;
          reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
        }
      },
      rate,
    );
    await restart;
    const stored = new Set(
      (await pool.query<{ run_id: string }>(`SELECT run_id FROM runs WHERE tenant_id = 'intake'`)).rows.map((row) => row.run_id),
    );
    const lost = accepted.filter((runId) => !stored.has(runId));
    const line =
      `up-kill: ${total} reports offered at ${rate}/s (load ${loadAtStart} at start, ${seconds(started)} s), up SIGKILLed after ${Math.floor(killAt)} and restarted: ` +
      `${accepted.length} accepted (202), ${refused} refused or unanswered while it was down, ${lost.length} accepted runs lost` +
      `${lost.length ? ` (first: ${lost.slice(0, 5).join(', ')})` : ''}; refusals: ${[...reasons].map(([reason, n]) => `${n}× ${reason}`).join('; ') || 'none'}`;
    const reported = `${line}; ${await stackLogSince()}`;
    log(reported);
    results.push(reported);
  }
} finally {
  console.log(
    `\nfault suite — ${new Date().toISOString()}, cores ${availableParallelism()}, load average ${load()} at the end, ${RUNS} runs per pass`,
  );
  for (const line of results) console.log(`  ${line}`);
  await connection.close();
  await pool.end();
  up.kill('SIGTERM');
  await new Promise((done) => (up.exitCode !== null || up.signalCode !== null ? done(undefined) : up.once('exit', done)));
  if (!process.env.SKILLSMITH_FAULTS_KEEP_HOME) await stackHome.remove();
}

/** pg_ctl on the stack's cluster, as the server's own user (PostgreSQL refuses root). */
async function pgCtl(args: string[]): Promise<void> {
  const binDir = await provisionNativePostgres({ home: stackHome.home });
  const dataDir = join(nativePostgresDir(stackHome.home), 'data');
  const asUser =
    process.getuid?.() === 0
      ? {
          uid: Number(execFileSync('id', ['-u', NATIVE_POSTGRES_USER], { encoding: 'utf8' })),
          gid: Number(execFileSync('id', ['-g', NATIVE_POSTGRES_USER], { encoding: 'utf8' })),
        }
      : {};
  await new Promise<void>((done, failed) => {
    const child = spawn(join(binDir, 'pg_ctl'), [args[0]!, '-D', dataDir, ...args.slice(1)], {
      env: { PATH: process.env.PATH, LC_ALL: 'C', TZ: 'UTC' },
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
      ...asUser,
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('close', (code) => (code === 0 ? done() : failed(new Error(`pg_ctl ${args[0]} exited ${code}: ${stderr}`))));
  });
}

/** The index in `workers` of the worker running one of the pass's activities (its own, or a cluster child's), if any. */
async function activityHolder(handle: WorkflowHandle, workers: ChildProcess[]): Promise<number | undefined> {
  const ids = [handle.workflowId];
  for await (const execution of client.workflow.list({
    query: `WorkflowId STARTS_WITH '${handle.workflowId}/' AND ExecutionStatus = 'Running'`,
  }))
    ids.push(execution.workflowId);
  for (const id of ids) {
    const description = await client.workflow
      .getHandle(id)
      .describe()
      .catch(() => undefined);
    for (const activity of description?.raw.pendingActivities ?? []) {
      const pid = Number(String(activity.lastWorkerIdentity ?? '').split('@')[0]);
      const index = workers.findIndex((worker) => worker.pid === pid);
      // 2 = PENDING_ACTIVITY_STATE_STARTED: a worker has the task now (a scheduled one names the last worker, maybe dead).
      if (index >= 0 && Number(activity.state) === 2) return index;
    }
  }
  return undefined;
}
