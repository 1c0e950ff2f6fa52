import { availableParallelism } from 'node:os';
import type { InferenceSession as OrtSession } from 'onnxruntime-node';

/**
 * Candidate pairs for the τ-graph from blocked float32 matrix products run by onnxruntime's
 * CPU kernels (MLAS GEMM, all cores) — the same runtime the embedder already loads. A product
 * is only a filter: its threshold sits `candidateMargin` below the real one (float32 GEMM error
 * on unit vectors is ~1e-5 at 768-d), and every candidate is re-checked by the exact
 * double-accumulated `cosineDistance` the clustering uses, so no edge is lost or invented.
 */
export const candidateMargin = 1e-3;

/** Rows per block: a 4096 × 4096 float block of products is 64 MiB. */
const defaultBlockSize = 4096;

// ---- a minimal ONNX model, protobuf-encoded by hand: Y = NonZero(MatMul(A, B) >= T) ----

function varint(value: number): number[] {
  const bytes: number[] = [];
  while (value > 0x7f) {
    bytes.push((value & 0x7f) | 0x80);
    value = Math.floor(value / 128);
  }
  bytes.push(value);
  return bytes;
}
const field = (number: number, wireType: number): number[] => varint((number << 3) | wireType);
const bytesField = (number: number, payload: number[]): number[] => [...field(number, 2), ...varint(payload.length), ...payload];
const stringField = (number: number, text: string): number[] => bytesField(number, [...Buffer.from(text, 'utf8')]);
const intField = (number: number, value: number): number[] => [...field(number, 0), ...varint(value)];

const FLOAT = 1;
const BOOL = 9;
const INT64 = 7;

function valueInfo(name: string, elementType: number): number[] {
  // ValueInfoProto { name = 1; type = 2 { tensor_type = 1 { elem_type = 1 } } }
  return [...stringField(1, name), ...bytesField(2, bytesField(1, intField(1, elementType)))];
}

function node(opType: string, inputs: string[], outputs: string[]): number[] {
  return [
    ...inputs.flatMap((input) => stringField(1, input)),
    ...outputs.flatMap((output) => stringField(2, output)),
    ...stringField(3, opType.toLowerCase()),
    ...stringField(4, opType),
  ];
}

function candidateModel(): Uint8Array {
  void BOOL;
  const graph = [
    ...bytesField(1, node('MatMul', ['a', 'b'], ['products'])),
    ...bytesField(1, node('GreaterOrEqual', ['products', 't'], ['mask'])),
    ...bytesField(1, node('NonZero', ['mask'], ['pairs'])),
    ...stringField(2, 'similarity_candidates'),
    ...bytesField(11, valueInfo('a', FLOAT)),
    ...bytesField(11, valueInfo('b', FLOAT)),
    ...bytesField(11, valueInfo('t', FLOAT)),
    ...bytesField(12, valueInfo('pairs', INT64)),
  ];
  // ModelProto { ir_version = 1; graph = 7; opset_import = 8 { version = 2 } }
  return Uint8Array.from([...intField(1, 8), ...bytesField(7, graph), ...bytesField(8, intField(2, 13))]);
}

let sessionPromise: Promise<{ ort: typeof import('onnxruntime-node'); session: OrtSession }> | undefined;

async function candidateSession() {
  sessionPromise ??= (async () => {
    const ort = await import('onnxruntime-node');
    const session = await ort.InferenceSession.create(candidateModel(), {
      intraOpNumThreads: availableParallelism(),
      graphOptimizationLevel: 'all',
    });
    return { ort, session };
  })();
  return sessionPromise;
}

function packRows(vectors: Float32Array[], start: number, end: number, dimension: number): Float32Array {
  const packed = new Float32Array((end - start) * dimension);
  for (let row = start; row < end; row++) packed.set(vectors[row]!, (row - start) * dimension);
  return packed;
}

function packTransposed(vectors: Float32Array[], start: number, end: number, dimension: number): Float32Array {
  const columns = end - start;
  const packed = new Float32Array(dimension * columns);
  for (let column = 0; column < columns; column++) {
    const vector = vectors[start + column]!;
    for (let k = 0; k < dimension; k++) packed[k * columns + column] = vector[k]!;
  }
  return packed;
}

/**
 * Calls `visit(i, j)` (i < j) for every pair whose float32 product is ≥ `minimumSimilarity`.
 */
export async function forEachCandidatePair(
  vectors: Float32Array[],
  minimumSimilarity: number,
  visit: (i: number, j: number) => void,
  options: { blockSize?: number } = {},
): Promise<void> {
  const n = vectors.length;
  if (n < 2) return;
  const dimension = vectors[0]!.length;
  const blockSize = options.blockSize ?? defaultBlockSize;
  const { ort, session } = await candidateSession();
  const threshold = new ort.Tensor('float32', Float32Array.of(minimumSimilarity), []);
  for (let rowStart = 0; rowStart < n; rowStart += blockSize) {
    const rowEnd = Math.min(n, rowStart + blockSize);
    const rows = new ort.Tensor('float32', packRows(vectors, rowStart, rowEnd, dimension), [rowEnd - rowStart, dimension]);
    for (let columnStart = rowStart; columnStart < n; columnStart += blockSize) {
      const columnEnd = Math.min(n, columnStart + blockSize);
      const columns = new ort.Tensor('float32', packTransposed(vectors, columnStart, columnEnd, dimension), [
        dimension,
        columnEnd - columnStart,
      ]);
      const output = await session.run({ a: rows, b: columns, t: threshold });
      const pairs = output.pairs!;
      const count = pairs.dims[1] ?? 0;
      const indices = pairs.data as BigInt64Array;
      for (let p = 0; p < count; p++) {
        const i = rowStart + Number(indices[p]!);
        const j = columnStart + Number(indices[count + p]!);
        if (i < j) visit(i, j);
      }
      pairs.dispose?.();
    }
  }
}
