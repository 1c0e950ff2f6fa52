import { execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { childEnvironment } from './child-environment.ts';

const bin = fileURLToPath(new URL('../../bin/skillsmith.js', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the real `skillsmith` bin in a child process with only the given settings. */
export function runSkillsmith(args: string[], env: Record<string, string | undefined> = {}, timeoutMs = 120_000): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      {
        env: childEnvironment(env),
        timeout: timeoutMs,
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/**
 * Runs the bin with its stdout piped through `cat`, as a user's `skillsmith … | jq` would: a pipe
 * drains at the reader's pace, so output cut short by an early exit shows here and not above.
 * `reader` replaces `cat` (e.g. `head -c 64`, a reader that closes the pipe early).
 */
export function runSkillsmithPiped(
  args: string[],
  env: Record<string, string | undefined> = {},
  reader: [string, ...string[]] = ['cat'],
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const cli = spawn(process.execPath, [bin, ...args], {
      env: childEnvironment(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The reader gets the child's pipe itself, as a shell pipeline would, and this process lets go of its
    // end: when the reader exits, the child's next write fails (EPIPE) exactly as under `| head`.
    const cat = spawn(reader[0], reader.slice(1), { stdio: [cli.stdout, 'pipe', 'inherit'] });
    cli.stdout.destroy();
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    cat.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    cli.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    cli.on('error', reject);
    cat.on('error', reject);
    // Both ends: a reader that stops early closes before the command exits.
    const exited = new Promise<number>((done) => cli.on('close', (exitCode) => done(exitCode ?? 1)));
    const read = new Promise<void>((done) => cat.on('close', () => done()));
    void Promise.all([exited, read]).then(([code]) =>
      resolve({ code, stdout: Buffer.concat(stdout).toString('utf8'), stderr: Buffer.concat(stderr).toString('utf8') }),
    );
  });
}
