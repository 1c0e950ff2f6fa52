import { availableParallelism } from 'node:os';
import type { InferenceSession as OrtSession } from 'onnxruntime-node';
import { loadEmbeddingRuntime, type OnnxRuntime } from '../embedding/embedding-runtime.ts';
import type { CandidateBound } from './run-similarity.ts';
import { toolSimilarityBound, type SparseToolVector } from './tool-sequence-similarity.ts';

/**
 * Candidate pairs for the threshold graph from blocked float32 matrix products run by
 * onnxruntime's CPU kernels (MLAS GEMM, all cores) — the same runtime the embedder already loads.
 * The tool signal prunes before any product, per procedure: points are ordered so that a
 * procedure's runs are adjacent, and a block of columns is only multiplied with the runs of the
 * procedures whose tool similarity to some procedure of the block can still make an edge. Each
 * such procedure's bound T — the most its tool similarity to the block's procedures can be
 * (`toolSimilarityBound`, checked against the tool vectors' inner product with the block's
 * element-wise maximum first) — gives the goal cosine its rows need (`CandidateBound.goalNeeded`),
 * carried into the product as one extra coordinate: a row is [g, −need], a column [g′, 1], and a
 * pair is a candidate when g·g′ − need ≥ −margin. A product is only a filter: the margin
 * (`candidateMargin`) sits far above float32 GEMM error on unit vectors (~1e-5 at 768-d), and every
 * candidate is re-checked by the exact distance the clustering uses, so no edge is lost or invented.
 */
export const candidateMargin = 1e-3;

/** Rows per product: a 4096 × 4096 float block of products is 64 MiB. */
const rowBlockSize = 4096;
/** Columns per product when tools take part (a narrower block holds fewer procedures, so fewer rows reach it). */
const toolColumnBlockSize = 256;
/** Goal cosines of float32 unit vectors reach 1 + 2e-4 at most: a row needing more is left out. */
const goalCosineCeiling = 1.001;

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
const INT32 = 6;

function valueInfo(name: string, elementType: number): number[] {
  // ValueInfoProto { name = 1; type = 2 { tensor_type = 1 { elem_type = 1 } } }
  return [...stringField(1, name), ...bytesField(2, bytesField(1, intField(1, elementType)))];
}

function intAttribute(name: string, value: number): number[] {
  // AttributeProto { name = 1; i = 3; type = 20 (INT = 2) }
  return [...stringField(1, name), ...intField(3, value), ...intField(20, 2)];
}

function node(opType: string, inputs: string[], outputs: string[], attributes: number[][] = []): number[] {
  return [
    ...inputs.flatMap((input) => stringField(1, input)),
    ...outputs.flatMap((output) => stringField(2, output)),
    ...stringField(3, opType.toLowerCase()),
    ...stringField(4, opType),
    ...attributes.flatMap((attribute) => bytesField(5, attribute)),
  ];
}

/**
 * pairs = Cast<int32>(NonZero(Gemm(A, Bᵀ) ≥ T)) and their products in the same (row-major) order:
 * B is a block of points row by row as they are stored (no transposed copy), the indices come back
 * as int32 (no BigInt per candidate), and a pair's product lets the caller drop it by the exact
 * tool similarity of its two runs before any exact goal cosine.
 */
function candidateModel(): Uint8Array {
  const graph = [
    ...bytesField(1, node('Gemm', ['a', 'b'], ['products'], [intAttribute('transB', 1)])),
    ...bytesField(1, node('GreaterOrEqual', ['products', 't'], ['mask'])),
    ...bytesField(1, node('NonZero', ['mask'], ['pairs64'])),
    ...bytesField(1, node('Cast', ['pairs64'], ['pairs'], [intAttribute('to', INT32)])),
    ...bytesField(1, node('Compress', ['products', 'mask'], ['values'])),
    ...stringField(2, 'similarity_candidates'),
    ...bytesField(11, valueInfo('a', FLOAT)),
    ...bytesField(11, valueInfo('b', FLOAT)),
    ...bytesField(11, valueInfo('t', FLOAT)),
    ...bytesField(12, valueInfo('pairs', INT32)),
    ...bytesField(12, valueInfo('values', FLOAT)),
  ];
  // ModelProto { ir_version = 1; graph = 7; opset_import = 8 { version = 2 } }
  return Uint8Array.from([...intField(1, 8), ...bytesField(7, graph), ...bytesField(8, intField(2, 13))]);
}

let sessionPromise: Promise<{ ort: OnnxRuntime; session: OrtSession }> | undefined;

async function candidateSession() {
  sessionPromise ??= (async () => {
    const { onnxRuntime: ort } = await loadEmbeddingRuntime();
    const session = await ort.InferenceSession.create(candidateModel(), {
      intraOpNumThreads: availableParallelism(),
      graphOptimizationLevel: 'all',
      // Idle pool threads sleep instead of spinning between products: spinning cost a third more CPU
      // for the same products on a shared machine (bench/results/2026-12-01-procedure-aware-clustering.md).
      extra: { session: { intra_op: { allow_spinning: '0' } } },
    });
    return { ort, session };
  })();
  return sessionPromise;
}

export interface CandidatePoints {
  /** Unit goal vectors. */
  goals: Float32Array[];
  /**
   * Each point's procedure (an index into `procedures`, their tool bags); unused when the bound does
   * not use tools. Points of one procedure are best adjacent, and alike procedures neighbours.
   */
  tools?: { procedureOfPoint: Int32Array; procedures: readonly SparseToolVector[]; dimension: number };
  bound: CandidateBound;
}

/** Maximal runs of adjacent points of one procedure: `starts[r] … starts[r + 1]` is procedure `procedure[r]`'s. */
function procedureRanges(procedureOfPoint: Int32Array): { starts: Int32Array; procedure: Int32Array } {
  const starts: number[] = [];
  const procedure: number[] = [];
  for (let point = 0; point < procedureOfPoint.length; point++) {
    if (point === 0 || procedureOfPoint[point] !== procedureOfPoint[point - 1]) {
      starts.push(point);
      procedure.push(procedureOfPoint[point]!);
    }
  }
  starts.push(procedureOfPoint.length);
  return { starts: Int32Array.from(starts), procedure: Int32Array.from(procedure) };
}

/**
 * Calls `visit(i, j, goalCosine)` (i < j) for every pair whose float32 goal cosine (`goalCosine`,
 * within ~1e-5 of the exact one) reaches the goal cosine the bound says its procedures' block
 * needs, less `candidateMargin`.
 */
export async function forEachCandidatePair(
  points: CandidatePoints,
  visit: (i: number, j: number, goalCosine: number) => void,
  options: { columnBlockSize?: number } = {},
): Promise<void> {
  const { goals, bound } = points;
  const n = goals.length;
  if (n < 2) return;
  const goalDimension = goals[0]!.length;
  const stride = goalDimension + 1;
  const tools = bound.usesTools ? points.tools : undefined;
  const columnBlockSize = options.columnBlockSize ?? (tools ? toolColumnBlockSize : rowBlockSize);
  const { ort, session } = await candidateSession();
  const thresholdTensor = new ort.Tensor('float32', Float32Array.of(-candidateMargin), []);

  // Every point as [g, 1]: the column side of a product as stored, the row side once its last coordinate is −need.
  const stored = new Float32Array(n * stride);
  goals.forEach((goal, index) => {
    stored.set(goal, index * stride);
    stored[index * stride + goalDimension] = 1;
  });
  const ranges = procedureRanges(tools?.procedureOfPoint ?? new Int32Array(n));
  const rangeCount = ranges.procedure.length;
  const procedureCount = tools?.procedures.length ?? 1;
  // Per block: the goal cosine each procedure's rows need (computed once per procedure and block).
  const needOf = new Float64Array(procedureCount);
  const needBlock = new Int32Array(procedureCount).fill(-1);
  const inBlock = new Int32Array(procedureCount).fill(-1);
  const columnMaximum = new Float64Array(tools?.dimension ?? 0);
  const rows = new Int32Array(n);
  const rowNeed = new Float64Array(n);
  // One buffer for every block's rows (allocating and zeroing up to 6 MiB per product was a tenth of the search at 100k).
  const rowBuffer = new Float32Array(Math.min(n, rowBlockSize) * stride);
  const noToolNeed = bound.goalNeeded(1);

  for (let columnStart = 0, block = 0; columnStart < n; columnStart += columnBlockSize, block++) {
    const columnEnd = Math.min(n, columnStart + columnBlockSize);
    const blockProcedures: SparseToolVector[] = [];
    if (tools) {
      for (let column = columnStart; column < columnEnd; column++) {
        const procedure = tools.procedureOfPoint[column]!;
        if (inBlock[procedure] === block) continue;
        inBlock[procedure] = block;
        const vector = tools.procedures[procedure]!;
        blockProcedures.push(vector);
        for (let index = 0; index < vector.axes.length; index++) {
          const axis = vector.axes[index]!;
          columnMaximum[axis] = Math.max(columnMaximum[axis]!, vector.values[index]!);
        }
      }
    }
    let rowCount = 0;
    for (let range = 0; range < rangeCount; range++) {
      const rangeStart = ranges.starts[range]!;
      if (rangeStart >= columnEnd) break;
      let need = noToolNeed;
      if (tools) {
        const procedure = ranges.procedure[range]!;
        if (needBlock[procedure] !== block) {
          needBlock[procedure] = block;
          const vector = tools.procedures[procedure]!;
          // u · max ≥ u · u′ ≥ t for every procedure of the block: a cheap first bound.
          let reach = 0;
          for (let index = 0; index < vector.axes.length; index++) reach += vector.values[index]! * columnMaximum[vector.axes[index]!]!;
          let toolBound = Math.min(1, reach);
          if (bound.goalNeeded(toolBound) - candidateMargin <= goalCosineCeiling) {
            let most = 0;
            for (const other of blockProcedures) {
              most = Math.max(most, toolSimilarityBound(vector, other));
              if (most >= toolBound) break;
            }
            toolBound = Math.min(toolBound, most);
          }
          needOf[procedure] = bound.goalNeeded(toolBound);
        }
        need = needOf[procedure]!;
      }
      if (need - candidateMargin > goalCosineCeiling) continue;
      const rangeEnd = Math.min(columnEnd, ranges.starts[range + 1]!);
      for (let row = rangeStart; row < rangeEnd; row++) {
        rows[rowCount] = row;
        rowNeed[rowCount++] = need;
      }
    }
    if (rowCount > 0) {
      const columns = new ort.Tensor('float32', stored.slice(columnStart * stride, columnEnd * stride), [columnEnd - columnStart, stride]);
      for (let chunkStart = 0; chunkStart < rowCount; chunkStart += rowBlockSize) {
        const chunkEnd = Math.min(rowCount, chunkStart + rowBlockSize);
        const packedRows = rowBuffer.subarray(0, (chunkEnd - chunkStart) * stride);
        // Rows come in runs of adjacent points (a procedure's): each run is one copy, then its rows' −need.
        for (let slot = chunkStart; slot < chunkEnd;) {
          let end = slot + 1;
          while (end < chunkEnd && rows[end] === rows[end - 1]! + 1) end++;
          packedRows.set(stored.subarray(rows[slot]! * stride, (rows[end - 1]! + 1) * stride), (slot - chunkStart) * stride);
          for (; slot < end; slot++) packedRows[(slot - chunkStart) * stride + goalDimension] = -rowNeed[slot]!;
        }
        const rowTensor = new ort.Tensor('float32', packedRows, [chunkEnd - chunkStart, stride]);
        const output = await session.run({ a: rowTensor, b: columns, t: thresholdTensor });
        const pairs = output.pairs!;
        const count = pairs.dims[1] ?? 0;
        const indices = pairs.data as Int32Array;
        const products = output.values!.data as Float32Array;
        for (let p = 0; p < count; p++) {
          const slot = chunkStart + indices[p]!;
          const i = rows[slot]!;
          const j = columnStart + indices[count + p]!;
          if (i < j) visit(i, j, products[p]! + rowNeed[slot]!);
        }
        pairs.dispose?.();
        output.values!.dispose?.();
      }
    }
    for (const vector of blockProcedures) for (const axis of vector.axes) columnMaximum[axis] = 0;
  }
}
