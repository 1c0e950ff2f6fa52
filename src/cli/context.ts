import type { Client } from '@temporalio/client';
import type pg from 'pg';
import type { Runtime } from '../app/runtime.ts';
import type { Services } from '../app/services.ts';
import type { Config } from '../app/config.ts';
import type { Logger } from '../logging/logger.ts';

/** How a command prints: JSON for machines (one document on stdout), text for people. */
export interface Output {
  result(json: boolean, value: unknown, human: () => string): void;
}

export const consoleOutput: Output = {
  result(json, value, human) {
    process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`);
  },
};

export interface CliContext {
  config: Config;
  logger: Logger;
  output: Output;
  runtime: Runtime;
  /** The database URL: DATABASE_URL, else the running `skillsmith up` stack. */
  databaseUrl(): Promise<string>;
  /** A migrated pool over `databaseUrl()`; closed by the CLI when the command ends. */
  openPool(): Promise<pg.Pool>;
  /** The application services over one `openPool()` pool, built once per command. */
  services(): Promise<Services>;
  /** TEMPORAL_ADDRESS, else the running `skillsmith up` stack. */
  temporalAddress(): Promise<string>;
  /** A client over `temporalAddress()`; its connection is closed when the command ends. */
  temporalClient(): Promise<Client>;
  /** The Temporal Web UI, when the running stack has one. */
  temporalUiUrl(): Promise<string | undefined>;
}
