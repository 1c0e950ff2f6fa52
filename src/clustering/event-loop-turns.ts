/**
 * Long synchronous work on a worker's one thread holds up everything else the worker does: its
 * workflow tasks, other activities' heartbeats, the API's requests. A turn taker lets such work
 * hand the event loop back between units (a component, a stage) once it has held it for
 * `intervalMs`: the work's results are the same, only interleaved with the rest.
 */
export type TakeTurn = () => Promise<void>;

const DEFAULT_TURN_MS = 50;

export function turnTaker(intervalMs: number = DEFAULT_TURN_MS): TakeTurn {
  let heldSince = performance.now();
  return async () => {
    if (performance.now() - heldSince < intervalMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    heldSince = performance.now();
  };
}
