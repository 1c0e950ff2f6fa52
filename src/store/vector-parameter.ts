/**
 * One vector as a statement parameter in pgvector's binary format (`vector_recv`: int16
 * dimension, int16 unused, then each element as a big-endian float4). node-postgres sends a
 * Buffer parameter as binary, so the server reads the floats as they are instead of parsing
 * ~5 KB of text, and the client does not format them: recall's statement measured 0.25–0.35 ms
 * less client CPU per call than with `pgvector.toSql` text (bench/results/2026-12-01-recall-latency.md).
 * The same float4 values either way (text is the float32's shortest decimal form, which parses back
 * to it), so the same results.
 */
export function vectorParameter(embedding: Float32Array): Buffer {
  const buffer = Buffer.allocUnsafe(4 + 4 * embedding.length);
  buffer.writeInt16BE(embedding.length, 0);
  buffer.writeInt16BE(0, 2);
  for (let index = 0; index < embedding.length; index++) buffer.writeFloatBE(embedding[index]!, 4 + 4 * index);
  return buffer;
}
