/**
 * The one poller the tests share: probes every `intervalMs` until it yields a value (anything but
 * `undefined`) and returns it, or fails naming what it waited for. A probe that throws is retried
 * only when `retryErrors` is set (end-to-end tests probe through a stack that is being killed).
 */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  options: { timeoutMs?: number; intervalMs?: number; retryErrors?: boolean } = {},
): Promise<T> {
  const { timeoutMs = 60_000, intervalMs = 200, retryErrors = false } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await (retryErrors ? probe().catch(() => undefined) : probe());
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
