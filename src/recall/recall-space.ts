import { CholeskyDecomposition, inverse, Matrix } from 'ml-matrix';

/**
 * The tenant's recall space: where a goal is told which job it is. A sentence embedder's cosine
 * is dominated by what varies inside one job — the customer, the ticket number, the sentence an
 * author writes — so two neighbouring jobs phrased alike ("archive the invoice for Acme" and
 * "lock the invoice for Acme") sit closer than two phrasings of one job. The tenant's own
 * procedures show which directions those are: the spread of each procedure's learned goals
 * around their centroid (within-job scatter). Whitening by it (a shrunk within-class covariance,
 * as linear discriminant analysis does) turns those directions down and leaves the ones that
 * tell jobs apart. Learned from the goals the tool evidence grouped, never from labels.
 *
 * In that space every job the tenant has run is a class — a procedure (the centroid of its
 * learned goals) or a run of another job (one no procedure counted or covers) — and a goal
 * belongs to the class it scores best against. A class of n goals predicts a new goal of its job
 * less tightly the fewer goals its centroid averages (its centroid is itself an estimate), so the
 * score allows for n: −‖q − μ‖² / (1 + κ / n). Recall returns a procedure only when it beats
 * every run of another job: a goal of a job without a skill gets nothing rather than a
 * neighbour's skill.
 */

/** Shrinkage of the within-job covariance towards its mean variance (bench/results/2026-12-07-recall-space.md). */
export const WITHIN_JOB_SHRINKAGE = 0.1;
/** κ: how much more room a class of few goals is given, its centroid being an estimate itself (bench/results/2026-12-07-recall-space.md). */
export const CENTROID_SIZE_CORRECTION = 0.5;
/** Goals per procedure the within-job scatter reads (bounds its cost: O(goals · dimension²)). */
export const SCATTER_GOALS_PER_PROCEDURE = 50;

export interface RecallSpaceMatrix {
  dimension: number;
  /** Row-major dimension × dimension: the inverse of the covariance's Cholesky factor (lower triangular). */
  whitening: Float32Array;
}

/**
 * The whitening learned from groups of goal vectors (each group one procedure's learned goals):
 * W = L⁻¹ for the shrunk within-group covariance S = (1 − s)·Σ_w + s·(tr Σ_w / d)·I = L·Lᵀ, so
 * that (W·x)·(W·y) = xᵀ S⁻¹ y. Groups of fewer than two goals carry no spread. Without any spread
 * at all the identity: the goal vectors as they are.
 */
export function learnWhitening(
  groups: ReadonlyArray<readonly Float32Array[]>,
  dimension: number,
  shrinkage = WITHIN_JOB_SHRINKAGE,
): RecallSpaceMatrix {
  const scatter = new Float64Array(dimension * dimension);
  const deviation = new Float64Array(dimension);
  let members = 0;
  for (const group of groups) {
    const goals = group.slice(0, SCATTER_GOALS_PER_PROCEDURE);
    if (goals.length < 2) continue;
    const mean = new Float64Array(dimension);
    for (const goal of goals) for (let k = 0; k < dimension; k++) mean[k]! += goal[k]! / goals.length;
    for (const goal of goals) {
      for (let k = 0; k < dimension; k++) deviation[k] = goal[k]! - mean[k]!;
      for (let a = 0; a < dimension; a++) {
        const da = deviation[a]!;
        const row = a * dimension;
        for (let b = 0; b <= a; b++) scatter[row + b]! += da * deviation[b]!;
      }
      members += 1;
    }
  }
  let trace = 0;
  for (let k = 0; k < dimension; k++) trace += scatter[k * dimension + k]!;
  if (members === 0 || trace === 0) return { dimension, whitening: identity(dimension) };
  const covariance = new Matrix(dimension, dimension);
  const meanVariance = trace / members / dimension;
  for (let a = 0; a < dimension; a++) {
    for (let b = 0; b <= a; b++) {
      const value = ((1 - shrinkage) * scatter[a * dimension + b]!) / members + (a === b ? shrinkage * meanVariance : 0);
      covariance.set(a, b, value);
      covariance.set(b, a, value);
    }
  }
  const factor = new CholeskyDecomposition(covariance).lowerTriangularMatrix;
  return { dimension, whitening: Float32Array.from(inverse(factor).to1DArray()) };
}

function identity(dimension: number): Float32Array {
  const matrix = new Float32Array(dimension * dimension);
  for (let k = 0; k < dimension; k++) matrix[k * dimension + k] = 1;
  return matrix;
}

/** A goal vector in the recall space: W·x, at unit length. */
export function whiten({ dimension, whitening }: RecallSpaceMatrix, vector: Float32Array): Float32Array {
  if (vector.length !== dimension) throw new RangeError(`a ${vector.length}-d vector in a ${dimension}-d recall space`);
  const out = new Float32Array(dimension);
  let norm = 0;
  for (let a = 0; a < dimension; a++) {
    let sum = 0;
    const row = a * dimension;
    // Lower triangular: the columns past the diagonal are zero.
    for (let b = 0; b <= a; b++) sum += whitening[row + b]! * vector[b]!;
    out[a] = sum;
    norm += sum * sum;
  }
  norm = Math.sqrt(norm);
  if (norm > 0) for (let a = 0; a < dimension; a++) out[a]! /= norm;
  return out;
}

export interface RecallClass {
  /** The mean of the members' whitened unit vectors (not renormalised). */
  centroid: Float32Array;
  normSquared: number;
  members: number;
}

/** The class of a set of whitened unit vectors. */
export function recallClassOf(whitened: readonly Float32Array[]): RecallClass {
  if (whitened.length === 0) throw new RangeError('a recall class needs at least one goal');
  const dimension = whitened[0]!.length;
  const centroid = new Float32Array(dimension);
  for (const vector of whitened) for (let k = 0; k < dimension; k++) centroid[k]! += vector[k]! / whitened.length;
  let normSquared = 0;
  for (const value of centroid) normSquared += value * value;
  return { centroid, normSquared, members: whitened.length };
}

/**
 * How well a whitened unit query fits a class: −‖q − μ‖² / (1 + κ / n), from q·μ (what the
 * store's inner product gives). Higher is better; 0 is a perfect fit.
 */
export function classScore(
  innerProduct: number,
  klass: Pick<RecallClass, 'normSquared' | 'members'>,
  correction = CENTROID_SIZE_CORRECTION,
): number {
  return -(1 + klass.normSquared - 2 * innerProduct) / (1 + correction / klass.members);
}

/** The whitening as stored: float32 little-endian, row-major. */
export function encodeWhitening(matrix: RecallSpaceMatrix): Buffer {
  const buffer = Buffer.alloc(matrix.whitening.length * 4);
  matrix.whitening.forEach((value, index) => buffer.writeFloatLE(value, index * 4));
  return buffer;
}

export function decodeWhitening(dimension: number, bytes: Buffer): RecallSpaceMatrix {
  if (bytes.length !== dimension * dimension * 4)
    throw new RangeError(`a ${dimension}-d whitening needs ${dimension * dimension * 4} bytes, got ${bytes.length}`);
  const whitening = new Float32Array(dimension * dimension);
  for (let index = 0; index < whitening.length; index++) whitening[index] = bytes.readFloatLE(index * 4);
  return { dimension, whitening };
}
