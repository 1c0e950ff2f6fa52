import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseResult, type IConfiguration } from 'dependency-cruiser';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const rules = createRequire(import.meta.url)('../../.dependency-cruiser.cjs') as IConfiguration;

describe('module dependencies (.dependency-cruiser.cjs)', () => {
  it('have no cycle between files or folders, no import from a lower layer of src/ to a higher one, src/ never imports workflows/, activities/ or workers/, workflows import only src/contracts, and no activity module imports another step', async () => {
    const result = await cruise(['src', 'workflows', 'activities', 'workers'], {
      ...rules.options,
      baseDir: root,
      validate: true,
      ruleSet: { forbidden: rules.forbidden },
    });
    const output = result.output as ICruiseResult;
    const violations = output.summary.violations.map((violation) => {
      const path = violation.cycle?.map((step) => step.name) ?? [violation.to];
      return `${violation.rule.name}: ${[violation.from, ...path].join(' → ')}`;
    });
    expect(output.summary.totalCruised).toBeGreaterThan(100);
    expect(violations).toEqual([]);
  });
});
