import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * gate.skill.no_tool_from_skill (structural): a skill is text the model reads, never code the
 * platform runs. Nothing in the skills, sessions or store code reaches a tool registry or
 * executes anything (child processes, vm, eval, dynamic import of package content).
 */
const roots = ['src/skills', 'src/sessions', 'src/store'];

const forbidden: Array<[RegExp, string]> = [
  [/from\s+['"][^'"]*tool[-_]?registry[^'"]*['"]/i, 'imports a tool registry'],
  [/\bregister(Dynamic)?Tool\b|\bregister_dynamic\b/, 'registers a tool'],
  [/from\s+['"](node:)?child_process['"]/, 'spawns processes'],
  [/from\s+['"](node:)?vm['"]/, 'evaluates code (vm)'],
  [/from\s+['"](node:)?worker_threads['"]/, 'starts threads'],
  [/\beval\s*\(/, 'calls eval'],
  [/\bnew\s+Function\s*\(/, 'builds a Function'],
  [/\bimport\s*\(\s*[^'"`\s]/, 'imports a computed module path'],
  [/@temporalio\//, 'reaches Temporal'],
];

async function sourceFiles(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) files.push(...(await sourceFiles(path)));
    else if (entry.name.endsWith('.ts')) files.push(path);
  }
  return files;
}

describe('gate.skill.no_tool_from_skill', () => {
  it('no module of the skills, sessions or store code reaches a tool registry or executes code', async () => {
    const violations: string[] = [];
    let scanned = 0;
    for (const root of roots) {
      for (const file of await sourceFiles(root)) {
        scanned += 1;
        const text = await readFile(file, 'utf8');
        for (const [pattern, what] of forbidden) if (pattern.test(text)) violations.push(`${file}: ${what}`);
      }
    }
    expect(scanned).toBeGreaterThan(10);
    expect(violations).toEqual([]);
  });
});
