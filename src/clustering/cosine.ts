/** The similarity of goal embeddings: cosine of unit vectors, accumulated in double. */

/**
 * Dot product accumulated in double, in a fixed order (symmetric: dot(a, b) === dot(b, a)). Also
 * takes sums of vectors held in double (a float32 vector copied to double gives the same result).
 */
export function dot(a: Float32Array | Float64Array, b: Float32Array | Float64Array): number {
  const length = a.length;
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let k = 0;
  for (; k + 3 < length; k += 4) {
    s0 += a[k]! * b[k]!;
    s1 += a[k + 1]! * b[k + 1]!;
    s2 += a[k + 2]! * b[k + 2]!;
    s3 += a[k + 3]! * b[k + 3]!;
  }
  for (; k < length; k++) s0 += a[k]! * b[k]!;
  return s0 + s1 + (s2 + s3);
}

/** The cosine of any two vectors (e.g. goal centroids, which are not unit); 0 when either is zero. */
export function cosine(a: Float32Array, b: Float32Array): number {
  const normA = dot(a, a);
  const normB = dot(b, b);
  return normA === 0 || normB === 0 ? 0 : dot(a, b) / Math.sqrt(normA * normB);
}

/** The cosine distance of two unit vectors, exactly as the clustering uses it. */
export function cosineDistance(a: Float32Array, b: Float32Array): number {
  return 1 - dot(a, b);
}
