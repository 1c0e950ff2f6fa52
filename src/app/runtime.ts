import type { Config } from './config.ts';
import type { Logger } from '../logging/logger.ts';

export interface RunningWorker {
  /** Resolves when the worker has shut down. */
  done: Promise<void>;
  shutdown(): Promise<void>;
}

export interface StackCheck {
  serverVersion: string;
  vectorExtension: string | null;
  migrations: number;
}

/**
 * What only the worker side can build (it bundles workflows/ and registers activities/); the
 * entry point hands an implementation to the CLI, so src/ never imports the worker.
 */
export interface Runtime {
  /** A worker on the task queue; `config` defaults to the process's own. */
  startWorker(options: { temporalAddress: string; databaseUrl: string; config?: Config }): Promise<RunningWorker>;
  checkStack(options: { temporalAddress: string }): Promise<StackCheck>;
}

/** Builds the runtime from the process's configuration, once it is loaded. */
export type RuntimeFactory = (config: Config, logger: Logger) => Runtime;
