import type { Client } from '@temporalio/client';
import type pg from 'pg';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';

/** How a command prints: JSON for machines (one document on stdout), text for people. */
export interface Output {
  result(json: boolean, value: unknown, human: () => string): void;
}

export const consoleOutput: Output = {
  result(json, value, human) {
    process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`);
  },
};

export interface RunningWorker {
  /** Resolves when the worker has shut down. */
  done: Promise<void>;
  shutdown(): Promise<void>;
}

/** What only the composition root can build (it knows workers/); commands receive it. */
export interface Runtime {
  /** A worker on the task queue; `config` defaults to the process's own. */
  startWorker(options: { temporalAddress: string; databaseUrl: string; config?: Config }): Promise<RunningWorker>;
  checkStack(options: { temporalAddress: string }): Promise<{ serverVersion: string; vectorExtension: string | null; migrations: number }>;
}

export interface CliContext {
  config: Config;
  logger: Logger;
  output: Output;
  runtime: Runtime;
  /** The database URL: DATABASE_URL, else the running `skillsmith up` stack. */
  databaseUrl(): Promise<string>;
  /** A migrated pool over `databaseUrl()`; closed by the CLI when the command ends. */
  openPool(): Promise<pg.Pool>;
  /** TEMPORAL_ADDRESS, else the running `skillsmith up` stack. */
  temporalAddress(): Promise<string>;
  /** A client over `temporalAddress()`; its connection is closed when the command ends. */
  temporalClient(): Promise<Client>;
  /** The Temporal Web UI, when the running stack has one. */
  temporalUiUrl(): Promise<string | undefined>;
}
