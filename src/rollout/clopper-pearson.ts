import { createRequire } from 'node:module';
import type betaQuantileFunction from '@stdlib/stats-base-dists-beta-quantile';

// Required on first use, not imported: the package is some 170 CommonJS files, and every CLI
// command (`--version` included) loads this module through the rollout and eval commands.
let betaQuantile: typeof betaQuantileFunction | undefined;
const loadBetaQuantile = () =>
  (betaQuantile ??= createRequire(import.meta.url)('@stdlib/stats-base-dists-beta-quantile') as typeof betaQuantileFunction);

/** A two-sided confidence interval for a proportion. */
export interface ProportionInterval {
  lower: number;
  upper: number;
}

/**
 * The exact (Clopper–Pearson) two-sided interval for a binomial proportion `successes / trials`:
 * lower = Beta⁻¹(α/2; x, n − x + 1), upper = Beta⁻¹(1 − α/2; x + 1, n − x), with the lower
 * bound 0 at x = 0 and the upper bound 1 at x = n (where those Beta parameters degenerate).
 */
export function clopperPearsonInterval(successes: number, trials: number, confidence = 0.95): ProportionInterval {
  if (!Number.isInteger(trials) || trials < 1) throw new RangeError(`trials must be an integer ≥ 1, got ${trials}`);
  if (!Number.isInteger(successes) || successes < 0 || successes > trials) {
    throw new RangeError(`successes must be an integer in [0, ${trials}], got ${successes}`);
  }
  if (!(confidence > 0 && confidence < 1)) throw new RangeError(`confidence must be in (0, 1), got ${confidence}`);
  const alpha = 1 - confidence;
  const quantile = loadBetaQuantile();
  return {
    lower: successes === 0 ? 0 : quantile(alpha / 2, successes, trials - successes + 1),
    upper: successes === trials ? 1 : quantile(1 - alpha / 2, successes + 1, trials - successes),
  };
}
