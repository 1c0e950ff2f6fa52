import { execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

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
        env: { PATH: process.env.PATH, HOME: process.env.HOME, SKILLSMITH_LOG_LEVEL: 'warn', ...env },
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
 */
export function runSkillsmithPiped(args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const cli = spawn(process.execPath, [bin, ...args], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, SKILLSMITH_LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const cat = spawn('cat', [], { stdio: ['pipe', 'pipe', 'inherit'] });
    cli.stdout.pipe(cat.stdin);
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    cat.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    cli.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    let code = 0;
    cli.on('error', reject);
    cli.on('exit', (exitCode) => {
      code = exitCode ?? 1;
    });
    cat.on('close', () =>
      resolve({ code, stdout: Buffer.concat(stdout).toString('utf8'), stderr: Buffer.concat(stderr).toString('utf8') }),
    );
  });
}
