import { loadConfig } from '../src/config.ts';
import { runCli } from '../src/cli/main.ts';
import { createLogger } from '../src/logger.ts';
import { createRuntime } from './composition-root.ts';

// The process entrypoint behind the `skillsmith` bin: wires the runtime into the CLI.
const config = (() => {
  try {
    return loadConfig();
  } catch (error) {
    process.stderr.write(`skillsmith: ${(error as Error).message}\n`);
    process.exit(1);
  }
})();
const exitCode = await runCli(process.argv.slice(2), createRuntime(config, createLogger(config.logLevel)));
process.exit(exitCode);
