import { readdir, readFile } from 'node:fs/promises';
import type pg from 'pg';

/**
 * CPU time of the processes a benchmark drives (this machine's /proc only): what a shared
 * machine's load inflates least, so runs at different loads stay comparable per request.
 */

/** User + system CPU of one process in ms, or undefined when it is gone or unreadable. */
export async function processCpuMs(pid: number): Promise<number | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  if (!stat) return undefined;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10; // clock ticks of 10 ms
}

/** Every descendant of `pid` (e.g. the Temporal dev server this process started). */
export async function descendantPids(pid: number = process.pid): Promise<number[]> {
  const children: number[] = [];
  const tasks = await readdir(`/proc/${pid}/task`).catch(() => [] as string[]);
  for (const task of tasks) {
    const listed = await readFile(`/proc/${pid}/task/${task}/children`, 'utf8').catch(() => '');
    for (const child of listed.split(' ').filter(Boolean)) children.push(Number(child));
  }
  const below = await Promise.all(children.map((child) => descendantPids(child)));
  return [...children, ...below.flat()];
}

/** Summed CPU of these processes in ms (those gone since count as 0). */
export async function totalCpuMs(pids: readonly number[]): Promise<number> {
  const each = await Promise.all(pids.map((pid) => processCpuMs(pid)));
  return each.reduce<number>((sum, ms) => sum + (ms ?? 0), 0);
}

/** Each live process's CPU in ms, by pid. */
export async function cpuByPid(pids: readonly number[]): Promise<Map<number, number>> {
  const each = await Promise.all(pids.map(async (pid) => [pid, await processCpuMs(pid)] as const));
  return new Map(each.filter((entry): entry is readonly [number, number] => entry[1] !== undefined));
}

/** The PostgreSQL backends serving the pool's database (native server on this machine only). */
export async function postgresBackendPids(pool: pg.Pool): Promise<number[]> {
  const { rows } = await pool.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database()');
  return rows.map((row) => row.pid);
}
