import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, fchmodSync, fstatSync, openSync, readSync } from 'node:fs';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { Connection } from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { requireFreePort, runningCommand } from './local-process.ts';
import { resolveTemporalCli, TemporalCliUnavailable, type ResolvedTemporalCli } from './temporal-cli.ts';

export interface TemporalDevServer {
  address: string;
  uiUrl: string | undefined;
  origin: ResolvedTemporalCli['origin'] | 'sdk-download';
  stop(): Promise<void>;
  /** Whether the server this process started is still running (its supervisor asks). */
  running(): Promise<boolean>;
  /** Starts it again on the same ports and history after it died. */
  restart(): Promise<void>;
}

export interface TemporalDevServerOptions {
  home: string;
  cliPath?: string | undefined;
  /** 0 picks a free port. */
  port?: number;
  /** 0 picks a free port; `false` runs headless (no Web UI). */
  uiPort?: number | false;
  /** Persist workflow history in this SQLite file; omit for in-memory. */
  dbFile?: string;
  namespace?: string;
  searchAttributes?: Record<string, 'Keyword' | 'Text' | 'Int' | 'Double' | 'Bool' | 'Datetime' | 'KeywordList'>;
  startTimeoutMs?: number;
  onProgress?: (message: string) => void;
}

type DevServerAttributeType = NonNullable<TemporalDevServerOptions['searchAttributes']>[string];

const SEARCH_ATTRIBUTE_TYPES: Record<DevServerAttributeType, SearchAttributeType> = {
  Keyword: SearchAttributeType.KEYWORD,
  Text: SearchAttributeType.TEXT,
  Int: SearchAttributeType.INT,
  Double: SearchAttributeType.DOUBLE,
  Bool: SearchAttributeType.BOOL,
  Datetime: SearchAttributeType.DATETIME,
  KeywordList: SearchAttributeType.KEYWORD_LIST,
};

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Polls the frontend's health check until it answers SERVING, or gives up with the log's tail. */
export async function waitForTemporal(address: string, timeoutMs: number, exited?: () => string | undefined): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = 'no answer yet';
  while (Date.now() < deadline) {
    const why = exited?.();
    if (why) throw new Error(`temporal dev server exited before it answered: ${why}`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1_000 });
      try {
        const health = await connection.healthService.check({});
        // 1 is grpc.health.v1 SERVING; its enum lives in @temporalio/proto's CommonJS root, not a dependency here.
        // eslint-disable-next-line @typescript-eslint/no-unsafe-enum-comparison
        if (health.status === 1) return;
        lastError = `health status ${health.status}`;
      } finally {
        await connection.close();
      }
    } catch (error) {
      lastError = (error as Error).message;
    }
    await new Promise((done) => setTimeout(done, 250));
  }
  throw new Error(`temporal dev server at ${address} did not answer within ${timeoutMs} ms: ${lastError}`);
}

/**
 * Stops the dev server that a process killed without its shutdown (SIGKILL of `up`) left running
 * on `dbFile`: named by the pid file, confirmed by its command line (a pid is reused), SIGTERM,
 * then SIGKILL after 10 s. Left alone it keeps the port and the history file, and the next
 * start fails with "address already in use" (found by the fault suite, bench/faults.ts).
 */
async function stopLeftoverServer(dbFile: string, onProgress?: (message: string) => void): Promise<void> {
  const pidFile = `${dbFile}.pid`;
  const pid = Number((await readFile(pidFile, 'utf8').catch(() => '')).trim());
  if (Number.isInteger(pid) && pid > 0 && (await runningCommand(pid))?.includes(`--db-filename ${dbFile}`)) {
    onProgress?.(`stopping the Temporal dev server (pid ${pid}) a killed stack left running on ${dbFile}`);
    for (const [signal, waitMs] of [
      ['SIGTERM', 10_000],
      ['SIGKILL', 5_000],
    ] as const) {
      try {
        process.kill(pid, signal);
      } catch {
        break;
      }
      const deadline = Date.now() + waitMs;
      while ((await runningCommand(pid)) && Date.now() < deadline) await new Promise((done) => setTimeout(done, 100));
      if (!(await runningCommand(pid))) break;
    }
  }
  await rm(pidFile, { force: true });
}

/**
 * Starts `temporal server start-dev` (with its Web UI unless headless), waits until it answers,
 * and returns how to reach and stop it. Where no CLI can be found or provisioned, falls back to
 * the SDK's own download (works only where the network allows it).
 */
export async function startTemporalDevServer(options: TemporalDevServerOptions): Promise<TemporalDevServer> {
  let cli: ResolvedTemporalCli;
  try {
    cli = await resolveTemporalCli({ home: options.home, cliPath: options.cliPath, onProgress: options.onProgress });
  } catch (error) {
    if (!(error instanceof TemporalCliUnavailable) || options.cliPath) throw error;
    options.onProgress?.(`${error.message}; trying the Temporal SDK's own download`);
    return startWithSdkDownload(options, error);
  }
  const port = options.port || (await freePort());
  const uiPort = options.uiPort === false ? undefined : options.uiPort || (await freePort());
  const address = `127.0.0.1:${port}`;
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--log-level', 'warn'];
  args.push('--namespace', options.namespace ?? 'default');
  if (uiPort === undefined) args.push('--headless');
  else args.push('--ui-port', String(uiPort), '--ui-ip', '127.0.0.1', '--ui-disable-news-fetch');
  if (options.dbFile) args.push('--db-filename', options.dbFile);
  for (const [key, type] of Object.entries(options.searchAttributes ?? {})) args.push('--search-attribute', `${key}=${type}`);

  // A persistent server is the stack's: one a killed stack left on the same history goes first.
  if (options.dbFile) await stopLeftoverServer(options.dbFile, options.onProgress);
  // Workflow histories and their logs hold what agents did: readable by the owner only, also
  // where an earlier version left them readable by all.
  const logDirectory = resolve(options.home, 'logs');
  await mkdir(logDirectory, { recursive: true, mode: 0o700 });
  await chmod(logDirectory, 0o700);
  const logFile = resolve(logDirectory, `temporal-${port}.log`);
  if (options.dbFile) {
    // The server creates its files under umask 077 (below); these are the ones an earlier start made.
    for (const file of [options.dbFile, `${options.dbFile}-wal`, `${options.dbFile}-shm`]) {
      await chmod(file, 0o600).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      });
    }
  }
  const pidFile = options.dbFile ? `${options.dbFile}.pid` : undefined;
  let child: ChildProcess | undefined;
  let exitReason: string | undefined;
  const exited = () => !child || child.exitCode !== null || child.signalCode !== null;

  const stop = async () => {
    const running = child;
    if (!running || exited()) return;
    const gone = new Promise<void>((done) => running.once('exit', () => done()));
    running.kill('SIGTERM');
    const forced = setTimeout(() => running.kill('SIGKILL'), 10_000);
    await gone;
    clearTimeout(forced);
    if (pidFile) await rm(pidFile, { force: true });
  };
  /** Spawns the server and waits until it answers: the first start, and a supervisor's restart after it died. */
  const launch = async () => {
    // A stranger on either port would answer the health check in the server's stead.
    await requireFreePort(port, 'SKILLSMITH_TEMPORAL_PORT');
    if (uiPort !== undefined) await requireFreePort(uiPort, 'SKILLSMITH_TEMPORAL_UI_PORT');
    // The server writes its log file itself, not through pipes to this process: a Go program whose
    // stdout is a pipe dies of SIGPIPE on its next log line once the reader is gone, so a killed
    // owner would take its server down at a random moment instead of leaving it to be stopped.
    const logFd = openSync(logFile, 'a', 0o600);
    fchmodSync(logFd, 0o600);
    let started: ChildProcess;
    try {
      // Through a shell only to set the umask: Node cannot set one for a single child.
      started = spawn('/bin/sh', ['-c', 'umask 077 && exec "$0" "$@"', cli.path, ...args], {
        stdio: ['ignore', logFd, logFd],
        detached: false,
      });
    } finally {
      closeSync(logFd);
    }
    child = started;
    exitReason = undefined;
    started.once('exit', (code, signal) => {
      // A port another process holds is the usual reason it dies at start: say which, not only "exit code 2".
      const busyAddress = /listen tcp ([\d.:]+): bind: address already in use/.exec(readLogTail(logFile))?.[1];
      const busy = busyAddress ? `${busyAddress} is already in use by another process; ` : '';
      exitReason = `${busy}exit code ${code ?? 'none'}, signal ${signal ?? 'none'} (log: ${logFile})`;
    });
    started.once('error', (error) => {
      exitReason = error.message;
    });
    if (pidFile && started.pid !== undefined) await writeFile(pidFile, `${started.pid}\n`, { mode: 0o600 });
    try {
      await waitForTemporal(address, options.startTimeoutMs ?? 60_000, () => exitReason);
    } catch (error) {
      await stop();
      throw error;
    }
  };
  await launch();
  return {
    address,
    uiUrl: uiPort === undefined ? undefined : `http://127.0.0.1:${uiPort}`,
    origin: cli.origin,
    stop,
    running: async () => !exited(),
    restart: launch,
  };
}

/** The last 64 KiB of a log file: where a dying server says why (it logs at warn, so little else). */
function readLogTail(file: string): string {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const size = fstatSync(fd).size;
    const length = Math.min(size, 64 * 1024);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    return buffer.toString();
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

async function startWithSdkDownload(options: TemporalDevServerOptions, cause: Error): Promise<TemporalDevServer> {
  const { TestWorkflowEnvironment } = await import('@temporalio/testing');
  let environment: Awaited<ReturnType<typeof TestWorkflowEnvironment.createLocal>>;
  try {
    environment = await TestWorkflowEnvironment.createLocal({
      server: {
        ip: '127.0.0.1',
        namespace: options.namespace ?? 'default',
        ui: options.uiPort !== false,
        searchAttributes: Object.entries(options.searchAttributes ?? {}).map(([name, type]) =>
          defineSearchAttributeKey(name, SEARCH_ATTRIBUTE_TYPES[type]),
        ),
      },
    });
  } catch (error) {
    throw new TemporalCliUnavailable(`${cause.message}; the SDK download failed too: ${(error as Error).message}`);
  }
  const address = environment.connection.options.address;
  return {
    address: String(address),
    uiUrl: undefined,
    origin: 'sdk-download',
    stop: () => environment.teardown(),
    // The SDK owns that server: it is not supervised.
    running: async () => true,
    restart: async () => undefined,
  };
}
