import { createServices, type Services } from '../../src/app/services.ts';
import { loadConfig, type Config } from '../../src/app/config.ts';
import { createLogger } from '../../src/logging/logger.ts';
import { openTestDatabase, type TestDatabase } from './database.ts';
import { activateTenants } from './rollout.ts';

export interface TestServices {
  database: TestDatabase;
  /** The application services (skill repository, skill_manage, approvals, agent specs) over `database`. */
  services: Services;
}

export interface TestServicesOptions {
  /** Tenants whose authoring is activated through the real rollout gate (an operator override). */
  activatedTenants?: readonly string[];
}

/**
 * A fresh test database and the services the composition root builds over it, from the default
 * configuration (licence Apache-2.0) with the given authoring settings — the setup every store
 * test shares instead of wiring repositories by hand.
 */
export async function openTestServices(
  authoring: Partial<Config['authoring']> = {},
  options: TestServicesOptions = {},
): Promise<TestServices> {
  const database = await openTestDatabase();
  const base = loadConfig({});
  const config: Config = { ...base, authoring: { ...base.authoring, ...authoring } };
  const services = createServices(config, database.pool, { logger: createLogger('silent') });
  await activateTenants(services.rollout, options.activatedTenants ?? []);
  return { database, services };
}
