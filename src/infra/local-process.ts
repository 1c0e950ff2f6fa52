import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { SkillsmithError } from '../errors/skillsmith-error.ts';

/** A port the stack must start a server on is held by a process that is not the stack's. */
export class PortHeld extends SkillsmithError {
  static override readonly code = 'PortHeld';
  constructor(
    readonly port: number,
    readonly setting: string,
    readonly holder: string,
  ) {
    super(`127.0.0.1:${port} (${setting}) is already held by ${holder}: stop it, or set ${setting} to a free port`);
  }
}

/** The process `ps` lists for `pid`: its state and command line, or undefined when there is none (or it is a zombie). */
export function runningCommand(pid: number): Promise<string | undefined> {
  return new Promise((done) => {
    execFile('ps', ['-o', 'stat=,command=', '-p', String(pid)], (error, stdout) => {
      const line = stdout.trim();
      done(error || !line || line.startsWith('Z') ? undefined : line);
    });
  });
}

/** Whether nothing listens on 127.0.0.1:`port` (binding it is the only answer that does not race a reader of /proc). */
function portFree(port: number): Promise<boolean> {
  return new Promise((done) => {
    const server = createServer();
    server.once('error', () => done(false));
    server.listen(port, '127.0.0.1', () => server.close(() => done(true)));
  });
}

/** Who listens on `port`, as `ss` names it ("pid 123 (temporal server start-dev …)"), or a plain "another process". */
function portHolder(port: number): Promise<string> {
  return new Promise((done) => {
    execFile('ss', ['-ltnpH', `sport = :${port}`], (error, stdout) => {
      const pid = /pid=(\d+)/.exec(stdout)?.[1];
      if (error || !pid) return done('another process (ss could not name it)');
      void runningCommand(Number(pid)).then((command) =>
        done(`pid ${pid} (${(command ?? '').replace(/^\S+\s+/, '').slice(0, 120) || 'exited'})`),
      );
    });
  });
}

/**
 * Refuses a port the stack is about to start a server on when something already listens there:
 * a dev server that fails to bind exits, but a stranger answering on its port would otherwise be
 * taken for it (issue #30 item 6). Throws PortHeld naming the process.
 */
export async function requireFreePort(port: number, setting: string): Promise<void> {
  if (await portFree(port)) return;
  throw new PortHeld(port, setting, await portHolder(port));
}
