import { availableParallelism } from 'node:os';
import type { InferenceSession as OrtSession } from 'onnxruntime-node';
import type { CandidateBound } from './run-similarity.ts';
import type { SparseToolVector } from './tool-sequence-similarity.ts';

/**
 * Candidate pairs for the threshold graph from blocked float32 matrix products run by
 * onnxruntime's CPU kernels (MLAS GEMM, all cores) — the same runtime the embedder already loads.
 * What is multiplied is the similarity's candidate bound: each run's goal vector scaled by √w
 * next to its procedure's tool vector scaled by √(1 − w), so one product is w·g + (1 − w)·(u·u'),
 * which every edge reaches (run-similarity.ts). The tool signal prunes before any product: a block
 * of columns is only multiplied with the rows whose tool vector can reach the threshold against
 * the block's element-wise maximum tool vector (tool vectors are non-negative), so runs of
 * unrelated procedures are never compared. A product is only a filter: its threshold sits
 * `candidateMargin` below the real one (float32 GEMM error on unit vectors is ~1e-5 at 768-d), and
 * every candidate is re-checked by the exact distance the clustering uses, so no edge is lost or
 * invented.
 */
export const candidateMargin = 1e-3;

/** Rows per product: a 4096 × 4096 float block of products is 64 MiB. */
const rowBlockSize = 4096;
/** Columns per product when tool vectors take part (smaller blocks have a tighter maximum). */
const toolColumnBlockSize = 256;
/** Goal cosines of float32 unit vectors reach 1 + 2e-4 at most; the row test allows for it. */
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

export interface CandidatePoints {
  /** Unit goal vectors. */
  goals: Float32Array[];
  /** Each point's tool vector (non-negative, unit), over `toolDimension` axes; unused when the bound's goal weight is 1. */
  tools?: { vectors: SparseToolVector[]; dimension: number };
  bound: CandidateBound;
}

/**
 * Calls `visit(i, j)` (i < j) for every pair whose float32 bound is ≥ its threshold − `candidateMargin`.
 * Points sorted so that alike procedures are neighbours make the column blocks' maxima tight.
 */
export async function forEachCandidatePair(
  points: CandidatePoints,
  visit: (i: number, j: number) => void,
  options: { columnBlockSize?: number } = {},
): Promise<void> {
  const { goals, bound } = points;
  const n = goals.length;
  if (n < 2) return;
  const goalDimension = goals[0]!.length;
  const toolWeight = 1 - bound.goalWeight;
  const tools = toolWeight > 0 ? points.tools : undefined;
  const goalScale = Math.sqrt(bound.goalWeight);
  const toolScale = Math.sqrt(toolWeight);
  const threshold = bound.threshold - candidateMargin;
  const columnBlockSize = options.columnBlockSize ?? (tools ? toolColumnBlockSize : rowBlockSize);
  const { ort, session } = await candidateSession();
  const thresholdTensor = new ort.Tensor('float32', Float32Array.of(threshold), []);

  // Every goal scaled once, rows then copied out of it.
  const scaledGoals = new Float32Array(n * goalDimension);
  goals.forEach((goal, index) => {
    for (let k = 0; k < goalDimension; k++) scaledGoals[index * goalDimension + k] = goal[k]! * goalScale;
  });
  const columnMaximum = new Float64Array(tools?.dimension ?? 0);
  const axisSlot = new Int32Array(tools?.dimension ?? 0).fill(-1);
  const rows = new Int32Array(n);

  for (let columnStart = 0; columnStart < n; columnStart += columnBlockSize) {
    const columnEnd = Math.min(n, columnStart + columnBlockSize);
    const columnCount = columnEnd - columnStart;
    // The block's tool axes and their maxima; a row whose bound against them misses the threshold is left out.
    const axes: number[] = [];
    let rowCount = 0;
    if (tools) {
      for (let column = columnStart; column < columnEnd; column++) {
        const vector = tools.vectors[column]!;
        vector.axes.forEach((axis, index) => {
          if (axisSlot[axis] === -1) {
            axisSlot[axis] = axes.length;
            axes.push(axis);
          }
          columnMaximum[axis] = Math.max(columnMaximum[axis]!, vector.values[index]!);
        });
      }
      const toolNeeded = (threshold - bound.goalWeight * goalCosineCeiling) / toolWeight;
      for (let row = 0; row < columnEnd; row++) {
        const vector = tools.vectors[row]!;
        let reach = 0;
        for (let index = 0; index < vector.axes.length; index++) reach += vector.values[index]! * columnMaximum[vector.axes[index]!]!;
        if (reach >= toolNeeded) rows[rowCount++] = row;
      }
    } else {
      for (let row = 0; row < columnEnd; row++) rows[rowCount++] = row;
    }
    const dimension = goalDimension + axes.length;
    if (rowCount > 0) {
      const packedColumns = new Float32Array(dimension * columnCount);
      for (let column = 0; column < columnCount; column++) {
        const goal = scaledGoals.subarray((columnStart + column) * goalDimension, (columnStart + column + 1) * goalDimension);
        for (let k = 0; k < goalDimension; k++) packedColumns[k * columnCount + column] = goal[k]!;
        if (tools) {
          const vector = tools.vectors[columnStart + column]!;
          vector.axes.forEach((axis, index) => {
            packedColumns[(goalDimension + axisSlot[axis]!) * columnCount + column] = vector.values[index]! * toolScale;
          });
        }
      }
      const columns = new ort.Tensor('float32', packedColumns, [dimension, columnCount]);
      for (let chunkStart = 0; chunkStart < rowCount; chunkStart += rowBlockSize) {
        const chunkEnd = Math.min(rowCount, chunkStart + rowBlockSize);
        const packedRows = new Float32Array((chunkEnd - chunkStart) * dimension);
        for (let slot = chunkStart; slot < chunkEnd; slot++) {
          const row = rows[slot]!;
          const offset = (slot - chunkStart) * dimension;
          packedRows.set(scaledGoals.subarray(row * goalDimension, (row + 1) * goalDimension), offset);
          if (tools) {
            const vector = tools.vectors[row]!;
            vector.axes.forEach((axis, index) => {
              const slotOfAxis = axisSlot[axis]!;
              if (slotOfAxis !== -1) packedRows[offset + goalDimension + slotOfAxis] = vector.values[index]! * toolScale;
            });
          }
        }
        const rowTensor = new ort.Tensor('float32', packedRows, [chunkEnd - chunkStart, dimension]);
        const output = await session.run({ a: rowTensor, b: columns, t: thresholdTensor });
        const pairs = output.pairs!;
        const count = pairs.dims[1] ?? 0;
        const indices = pairs.data as BigInt64Array;
        for (let p = 0; p < count; p++) {
          const i = rows[chunkStart + Number(indices[p]!)]!;
          const j = columnStart + Number(indices[count + p]!);
          if (i < j) visit(i, j);
        }
        pairs.dispose?.();
      }
    }
    for (const axis of axes) {
      axisSlot[axis] = -1;
      columnMaximum[axis] = 0;
    }
  }
}
