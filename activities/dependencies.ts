import type pg from 'pg';
import type { Config } from '../src/config.ts';
import type { Logger } from '../src/logger.ts';

/** What every activity factory receives from the composition root (workers/). */
export interface ActivityDependencies {
  pool: pg.Pool;
  config: Config;
  logger: Logger;
}
