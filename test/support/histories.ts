import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { temporal } from '@temporalio/proto';

/** Recorded workflow histories that guard workflow edits (replayed by test/workflows/replay.test.ts). */
export const historiesDirectory = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));

export async function recordHistory(name: string, workflowId: string, history: temporal.api.history.v1.IHistory): Promise<void> {
  await writeFile(`${historiesDirectory}${name}.json`, `${JSON.stringify({ workflowId, history }, null, 1)}\n`);
}

/** The history (as a proto message) and the workflow id it ran under (child ids derive from it). */
export async function loadHistory(name: string): Promise<{ workflowId: string; history: temporal.api.history.v1.History }> {
  const recorded = JSON.parse(await readFile(`${historiesDirectory}${name}.json`, 'utf8')) as { workflowId: string; history: object };
  return { workflowId: recorded.workflowId, history: temporal.api.history.v1.History.fromObject(recorded.history) };
}
