/**
 * The goal cosine of two runs, `dot(vectors[a], vectors[b])` of cosine.ts to the last bit, but with
 * two lanes of double arithmetic at a time: a hand-assembled WebAssembly SIMD kernel over a copy of
 * the vectors in its linear memory. The threshold graph computes this for every candidate pair
 * (25 M at 100k runs), where the scalar loop was the largest cost after the matrix products.
 *
 * Why the result is the same double: `dot` keeps four accumulators s0…s3 over k ≡ 0…3 (mod 4),
 * adds the tail to s0 and returns (s0 + s1) + (s2 + s3). The kernel holds (s0, s1) and (s2, s3) in
 * two f64x2 lanes and performs, per lane, the very same IEEE operations in the same order: each
 * float32 is widened to double exactly, the product of two widened floats is exact (24 + 24 bits),
 * and WebAssembly never fuses a multiply and an add. Where WebAssembly SIMD is unavailable the
 * scalar `dot` is used (the same values, slower).
 */
import { dot } from './cosine.ts';

const i32 = 0x7f;
const f64 = 0x7c;
const v128 = 0x7b;

function leb(value: number): number[] {
  const bytes: number[] = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value !== 0) byte |= 0x80;
    bytes.push(byte);
  } while (value !== 0);
  return bytes;
}
const section = (id: number, payload: number[]): number[] => [id, ...leb(payload.length), ...payload];
const name = (text: string): number[] => [...leb(text.length), ...Buffer.from(text, 'utf8')];

// Locals: 0 a, 1 b (byte offsets), 2 length (floats); 3 end of the 4-wide part, 4 end; 5 (s0, s1), 6 (s2, s3); 7 s0.
const get = (local: number) => [0x20, local];
const set = (local: number) => [0x21, local];
const load64Zero = (offset: number) => [0xfd, 0x5d, 3, offset]; // v128.load64_zero: two floats into the low half
const promoteLow = [0xfd, 0x5f]; // f64x2.promote_low_f32x4
const f64x2Add = [0xfd, 0xf0, 0x01];
const f64x2Mul = [0xfd, 0xf2, 0x01];
const extractLane = (lane: number) => [0xfd, 0x21, lane]; // f64x2.extract_lane
const advance = (local: number, bytes: number) => [...get(local), 0x41, bytes, 0x6a, ...set(local)];
const lanePair = (accumulator: number, offset: number) => [
  ...get(accumulator),
  ...get(0),
  ...load64Zero(offset),
  ...promoteLow,
  ...get(1),
  ...load64Zero(offset),
  ...promoteLow,
  ...f64x2Mul,
  ...f64x2Add,
  ...set(accumulator),
];

const body = [
  ...[0x03, 0x02, i32, 0x02, v128, 0x01, f64], // local declarations
  // end = a + 4·length; end4 = a + 4·(length & ~3)
  ...[...get(0), ...get(2), 0x41, 4, 0x6c, 0x6a, ...set(4)],
  ...[...get(0), ...get(2), 0x41, 0x7c, 0x71, 0x41, 4, 0x6c, 0x6a, ...set(3)],
  ...[0x02, 0x40, 0x03, 0x40], // block, loop
  ...[...get(0), ...get(3), 0x4f, 0x0d, 1], // a ≥ end4: break
  ...lanePair(5, 0),
  ...lanePair(6, 8),
  ...advance(0, 16),
  ...advance(1, 16),
  ...[0x0c, 0, 0x0b, 0x0b], // continue; end loop, end block
  ...[...get(5), ...extractLane(0), ...set(7)],
  ...[0x02, 0x40, 0x03, 0x40],
  ...[...get(0), ...get(4), 0x4f, 0x0d, 1], // a ≥ end: break
  ...[...get(7), ...get(0), 0x2a, 2, 0, 0xbb, ...get(1), 0x2a, 2, 0, 0xbb, 0xa2, 0xa0, ...set(7)], // s0 += a·b
  ...advance(0, 4),
  ...advance(1, 4),
  ...[0x0c, 0, 0x0b, 0x0b],
  // (s0 + s1) + (s2 + s3)
  ...[...get(7), ...get(5), ...extractLane(1), 0xa0, ...get(6), ...extractLane(0), ...get(6), ...extractLane(1), 0xa0, 0xa0],
  0x0b,
];

const kernel = Uint8Array.from([
  ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
  ...section(1, [1, 0x60, 3, i32, i32, i32, 1, f64]), // (i32, i32, i32) → f64
  ...section(2, [1, ...name('env'), ...name('memory'), 0x02, 0x00, 0x00]), // imported memory, no minimum
  ...section(3, [1, 0]),
  ...section(7, [1, ...name('dot'), 0x00, 0]),
  ...section(10, [1, ...leb(body.length), ...body]),
]);

/** The part of the WebAssembly JS API used here (the project's TypeScript libs declare no WebAssembly values). */
interface WebAssemblyApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
  Memory: new (descriptor: { initial: number }) => { buffer: ArrayBuffer };
}
const webAssembly = (globalThis as unknown as { WebAssembly?: WebAssemblyApi }).WebAssembly;

let compiled: object | null | undefined;

function kernelModule(): object | null {
  if (compiled === undefined) compiled = webAssembly?.validate(kernel) ? new webAssembly.Module(kernel) : null;
  return compiled;
}

/** wasm32 linear memory is at most 4 GiB; past that (or without WebAssembly SIMD) the scalar loop is used. */
const maximumBytes = 2 ** 32 - 2 ** 16;

/** `(a, b) => dot(vectors[a], vectors[b])` over equal-length vectors, the same double, faster. */
export function goalDotOf(vectors: readonly Float32Array[]): (a: number, b: number) => number {
  const scalar = (a: number, b: number) => dot(vectors[a]!, vectors[b]!);
  const dimension = vectors[0]?.length ?? 0;
  const bytes = vectors.length * dimension * 4;
  const module = kernelModule();
  if (!webAssembly || !module || bytes === 0 || bytes > maximumBytes) return scalar;
  const memory = new webAssembly.Memory({ initial: Math.ceil(bytes / 65536) });
  const copy = new Float32Array(memory.buffer, 0, vectors.length * dimension);
  vectors.forEach((vector, index) => copy.set(vector, index * dimension));
  const kernelDot = new webAssembly.Instance(module, { env: { memory } }).exports.dot as (a: number, b: number, length: number) => number;
  const stride = dimension * 4;
  return (a, b) => kernelDot(a * stride, b * stride, dimension);
}
