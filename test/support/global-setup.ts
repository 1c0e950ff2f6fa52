import type { TestProject } from 'vitest/node';
import { PASS_SEARCH_ATTRIBUTE_TYPES } from '../../src/client/pass-search-attributes.ts';
import { startTemporalDevServer } from '../../src/infra/temporal-dev-server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
  }
}

/**
 * One real Temporal dev server for the whole run (headless, in memory), unless TEMPORAL_ADDRESS
 * names one already running (CI and `skillsmith up` users).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env.TEMPORAL_ADDRESS;
  if (external) {
    project.provide('temporalAddress', external);
    return async () => undefined;
  }
  const server = await startTemporalDevServer({
    home: process.env.SKILLSMITH_HOME ?? '.skillsmith',
    cliPath: process.env.TEMPORAL_CLI_PATH,
    uiPort: false,
    searchAttributes: PASS_SEARCH_ATTRIBUTE_TYPES,
    onProgress: (message) => process.stderr.write(`[temporal] ${message}\n`),
  });
  project.provide('temporalAddress', server.address);
  return server.stop;
}
