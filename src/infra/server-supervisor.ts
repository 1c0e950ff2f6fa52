/** A server the stack started and answers for: asked whether it runs, started again when not. */
export interface SupervisedServer {
  /** How the log names it: "PostgreSQL", "the Temporal dev server". */
  name: string;
  running(): Promise<boolean>;
  restart(): Promise<void>;
}

export interface SupervisorEvents {
  down(name: string): void;
  restarted(name: string, downForMs: number, attempts: number): void;
  restartFailed(name: string, error: Error, attempt: number, retryInMs: number): void;
}

export interface SupervisorOptions {
  /** How often the server is asked whether it runs. */
  checkIntervalMs?: number;
  /** The wait after the first failed restart, doubled after each further one up to `maxBackoffMs`. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
}

export interface Supervisor {
  /** Stops watching (before the server itself is stopped, so a deliberate stop is not undone). */
  stop(): Promise<void>;
}

/**
 * Keeps a server the stack started running: checked every `checkIntervalMs`, restarted when it
 * died (a SIGKILL, a crash), with a bounded exponential backoff between failed restarts, so a
 * server that cannot start yet (its old processes still exiting, a port held) is retried without
 * spinning and comes back without an operator. Each event is reported for the log.
 */
export function superviseServer(server: SupervisedServer, events: SupervisorEvents, options: SupervisorOptions = {}): Supervisor {
  const checkIntervalMs = options.checkIntervalMs ?? 1_000;
  const initialBackoffMs = options.initialBackoffMs ?? 500;
  const maxBackoffMs = options.maxBackoffMs ?? 15_000;
  let stopped = false;
  let wake: (() => void) | undefined;
  const sleep = (ms: number) =>
    new Promise<void>((done) => {
      const timer = setTimeout(done, ms);
      wake = () => {
        clearTimeout(timer);
        done();
      };
    });

  const watch = async () => {
    while (!stopped) {
      await sleep(checkIntervalMs);
      if (stopped || (await server.running().catch(() => true))) continue;
      if (stopped) break;
      const downSince = Date.now();
      events.down(server.name);
      for (let attempt = 1, backoffMs = initialBackoffMs; !stopped; attempt += 1, backoffMs = Math.min(backoffMs * 2, maxBackoffMs)) {
        try {
          await server.restart();
          events.restarted(server.name, Date.now() - downSince, attempt);
          break;
        } catch (error) {
          if (stopped) break;
          events.restartFailed(server.name, error as Error, attempt, backoffMs);
          await sleep(backoffMs);
        }
      }
    }
  };
  const watching = watch();
  return {
    async stop() {
      stopped = true;
      wake?.();
      await watching;
    },
  };
}
