import { SingleBar } from 'cli-progress';

/**
 * Progress of a long step on stderr, so stdout stays the result: a bar for a person at a
 * terminal, otherwise one JSON line per second per step and one when it ends
 * (`{"progress":{"step","done","total","unit","ratePerSecond"}}`), which a script can follow.
 * `--quiet` silences both.
 */
export interface ProgressReporter {
  update(step: string, done: number, total: number, unit: string): void;
  stop(): void;
}

const silent: ProgressReporter = { update: () => undefined, stop: () => undefined };

export function createProgressReporter(options: {
  quiet: boolean;
  stream?: NodeJS.WriteStream;
  lineIntervalMs?: number;
}): ProgressReporter {
  if (options.quiet) return silent;
  const stream = options.stream ?? process.stderr;
  const lineIntervalMs = options.lineIntervalMs ?? 1_000;
  let current: { step: string; startedAt: number; lastLineAt: number; bar?: SingleBar } | undefined;
  const stop = () => {
    current?.bar?.stop();
    current = undefined;
  };
  return {
    update(step, done, total, unit) {
      const now = Date.now();
      if (current?.step !== step) {
        stop();
        current = { step, startedAt: now, lastLineAt: 0 };
        if (stream.isTTY) {
          current.bar = new SingleBar({
            format: `${step} [{bar}] {value}/{total} ${unit} | {rate}/s | eta {eta}s`,
            stream,
            hideCursor: true,
          });
          current.bar.start(total, 0, { rate: 0 });
        }
      }
      const seconds = Math.max((now - current.startedAt) / 1_000, 0.001);
      const ratePerSecond = Math.round((done / seconds) * 10) / 10;
      if (current.bar) {
        current.bar.setTotal(total);
        current.bar.update(done, { rate: ratePerSecond });
      } else if (done >= total || now - current.lastLineAt >= lineIntervalMs) {
        current.lastLineAt = now;
        stream.write(`${JSON.stringify({ progress: { step, done, total, unit, ratePerSecond } })}\n`);
      }
    },
    stop,
  };
}
