import { describe, expect, it } from 'vitest';
import type { Embedder } from '../../src/embedding/embedder.ts';
import { QueryEmbeddings } from '../../src/recall/query-embeddings.ts';

/** An embedder that records what it was asked; a text's vector is derived from the text (deterministic). */
function recordingEmbedder(modelId: string) {
  const asked: string[][] = [];
  const embedder: Embedder = {
    modelId,
    dimension: 2,
    embed: (texts) => {
      asked.push([...texts]);
      return Promise.resolve(texts.map((text) => Float32Array.from([text.length, modelId.length])));
    },
  };
  return { embedder, asked };
}

describe('the query embeddings a process keeps (src/recall/query-embeddings.ts)', () => {
  it('embeds a goal once: the same goal again, in other spacing, is answered from the cache with the same vector', async () => {
    const cache = new QueryEmbeddings();
    const { embedder, asked } = recordingEmbedder('model-a');
    const [first] = await cache.embed('acme', embedder, ['refund order A-1 ']);
    const [again] = await cache.embed('acme', embedder, ['  refund   order A-1']);
    expect(again).toBe(first);
    expect(asked).toEqual([['refund order A-1']]);
  });

  it('embeds only the goals it does not keep, each distinct one once, and returns them in order', async () => {
    const cache = new QueryEmbeddings();
    const { embedder, asked } = recordingEmbedder('model-a');
    await cache.embed('acme', embedder, ['a goal']);
    const vectors = await cache.embed('acme', embedder, ['another goal', 'a goal', 'another  goal']);
    expect(asked).toEqual([['a goal'], ['another goal']]);
    expect(vectors.map((vector) => vector[0])).toEqual([12, 6, 12]);
  });

  it("never answers one tenant with another's goal, nor a model with another model's vector", async () => {
    const cache = new QueryEmbeddings();
    const a = recordingEmbedder('model-a');
    const b = recordingEmbedder('model-bb');
    await cache.embed('acme', a.embedder, ['rotate the key']);
    await cache.embed('globex', a.embedder, ['rotate the key']);
    expect(a.asked).toHaveLength(2);
    const [moved] = await cache.embed('acme', b.embedder, ['rotate the key']);
    expect(b.asked).toEqual([['rotate the key']]);
    expect(moved![1]).toBe('model-bb'.length);
  });

  it('keeps at most its limit, forgetting the least recently used goal first', async () => {
    const cache = new QueryEmbeddings(2);
    const { embedder, asked } = recordingEmbedder('model-a');
    await cache.embed('acme', embedder, ['one']);
    await cache.embed('acme', embedder, ['two']);
    await cache.embed('acme', embedder, ['one']); // one is now the most recently used
    await cache.embed('acme', embedder, ['three']); // forgets two
    await cache.embed('acme', embedder, ['one']);
    await cache.embed('acme', embedder, ['two']);
    expect(asked).toEqual([['one'], ['two'], ['three'], ['two']]);
  });
});
