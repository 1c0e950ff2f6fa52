const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Offers `count` items with `concurrency` senders, each one at a time; at `rate` per second in
 * total when given (item i is due i/rate s after the start), else as fast as the senders go.
 * What a sender does with an item (timing it, counting failures) is `send`'s business.
 */
export async function offerPaced(
  count: number,
  options: { concurrency: number; rate?: number | undefined },
  send: (index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (next < count) {
        const index = next++;
        if (options.rate !== undefined) {
          const due = started + (index * 1000) / options.rate;
          if (due > performance.now()) await sleep(due - performance.now());
        }
        await send(index);
      }
    }),
  );
}
