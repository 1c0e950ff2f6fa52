import { createSeededRandom, type SeededRandom } from '../../src/clustering/seeded-random.ts';

/**
 * Deterministic unit vectors for clustering tests and benchmarks (not embeddings of text).
 */

function gaussian(random: SeededRandom): number {
  // Box–Muller; 1 − next() is in (0, 1], so the log is finite.
  return Math.sqrt(-2 * Math.log(1 - random.next())) * Math.cos(2 * Math.PI * random.next());
}

// Plain loops rather than `from` with a callback: the 100k-run clustering bench draws 38 M
// coordinates, and the same arithmetic in the same order gives the same vectors.
function normalise(values: Float64Array): Float32Array {
  let sum = 0;
  for (let k = 0; k < values.length; k++) sum += values[k]! * values[k]!;
  const norm = Math.sqrt(sum) || 1;
  const unit = new Float32Array(values.length);
  for (let k = 0; k < values.length; k++) unit[k] = values[k]! / norm;
  return unit;
}

function randomDirection(random: SeededRandom, dimension: number): Float64Array {
  const direction = new Float64Array(dimension);
  for (let k = 0; k < dimension; k++) direction[k] = gaussian(random);
  return direction;
}

/**
 * A paraphrase-like neighbour of a unit vector: `source` turned by isotropic Gaussian noise to
 * cosine ≈ `cosine` with it (exactly, before float32 rounding), so two such neighbours of one
 * source meet at ≈ cosine².
 */
export function noisyNeighbour(random: SeededRandom, source: Float32Array, cosine: number): Float32Array {
  const noise = randomDirection(random, source.length);
  let noiseSquared = 0;
  for (let k = 0; k < noise.length; k++) noiseSquared += noise[k]! * noise[k]!;
  const scale = Math.sqrt(1 / (cosine * cosine) - 1) / Math.sqrt(noiseSquared);
  const turned = new Float64Array(source.length);
  for (let k = 0; k < source.length; k++) turned[k] = source[k]! + noise[k]! * scale;
  return normalise(turned);
}

/** Uniform random unit vectors (low dimensions give dense, tangled τ-graphs). */
export function randomUnitVectors(count: number, dimension: number, seed: number): Float32Array[] {
  const random = createSeededRandom(seed);
  return Array.from({ length: count }, () => normalise(randomDirection(random, dimension)));
}

export interface StructuredVectors {
  vectors: Float32Array[];
  /** The family each vector was drawn from. */
  labels: number[];
}

/**
 * Goal-like structure: families (tasks) with a few sub-topics (phrasings) each, per-family noise
 * from tight to loose so that τ-components have inner structure, and ~5% exact duplicates
 * (the same goal text reported twice) to exercise distance ties.
 */
export function structuredUnitVectors(
  count: number,
  dimension: number,
  seed: number,
  options: { familySize?: number } = {},
): StructuredVectors {
  const random = createSeededRandom(seed);
  const familyCount = Math.max(1, Math.round(count / (options.familySize ?? 40)));
  const families = Array.from({ length: familyCount }, () => {
    const centre = normalise(randomDirection(random, dimension));
    const subTopics = Array.from({ length: random.integer(1, 4) }, () => {
      const offset = randomDirection(random, dimension);
      return Float64Array.from(centre, (value, k) => value + (0.45 * offset[k]!) / Math.sqrt(dimension));
    });
    return { subTopics, noise: 0.25 + 0.4 * random.next() };
  });
  const vectors: Float32Array[] = [];
  const labels: number[] = [];
  for (let index = 0; index < count; index++) {
    if (index > 0 && random.chance(0.05)) {
      const original = random.integer(0, index - 1);
      vectors.push(vectors[original]!.slice());
      labels.push(labels[original]!);
      continue;
    }
    const label = random.integer(0, familyCount - 1);
    const family = families[label]!;
    const subTopic = random.pick(family.subTopics);
    const offset = randomDirection(random, dimension);
    vectors.push(normalise(Float64Array.from(subTopic, (value, k) => value + (family.noise * offset[k]!) / Math.sqrt(dimension))));
    labels.push(label);
  }
  return { vectors, labels };
}
