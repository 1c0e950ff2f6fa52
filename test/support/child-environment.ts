import { testRuntimeDir } from './test-model.ts';

/**
 * The environment of a skillsmith process a test starts: a shell's PATH and HOME, warnings only,
 * the embedding runtime the suite installed (a process with a fresh SKILLSMITH_HOME would look for
 * its own, as it looks for its own models unless SKILLSMITH_MODEL_DIR says), then `env` over them.
 */
export function childEnvironment(env: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    SKILLSMITH_LOG_LEVEL: 'warn',
    SKILLSMITH_EMBEDDING_RUNTIME_DIR: testRuntimeDir,
    ...env,
  };
}
