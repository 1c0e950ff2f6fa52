import { configDefaults, defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

/**
 * The fault suite (`npm run faults`, issue #30): test/faults/, where the stack's own servers are
 * SIGKILLed, its disk filled and its database kept away for longer than the default suite can
 * afford. The same set-up as `npm test` (global set-up, shared forks).
 */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['test/faults/**/*.test.ts'],
    exclude: [...configDefaults.exclude],
    testTimeout: 300_000,
  },
});
