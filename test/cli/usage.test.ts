import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { runSkillsmith } from '../support/cli.ts';

describe('usage: --version, help, usage errors', () => {
  it('--version prints the package version', async () => {
    const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8'));
    const run = await runSkillsmith(['--version']);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`${version}\n`);
  });

  it("a subcommand's help shows the global options and an example", async () => {
    const run = await runSkillsmith(['passes', 'show', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/Global Options:[\s\S]*--tenant <tenant>[\s\S]*--json/);
    expect(run.stdout).toMatch(/Example:\n {2}skillsmith passes show <id> --tenant acme --json\n/);
  });

  it('an unknown option is the JSON error envelope under --json, and one line on stderr', async () => {
    const run = await runSkillsmith(['passes', '--bogus', '--json']);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toEqual({ error: { code: 'InvalidUsage', message: "unknown option '--bogus'" } });
    expect(run.stderr).toBe("skillsmith: unknown option '--bogus' (see skillsmith --help)\n");
  });

  it('a missing argument is reported the same way; without --json stdout stays empty', async () => {
    const run = await runSkillsmith(['passes', 'show']);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe("skillsmith: missing required argument 'id' (see skillsmith --help)\n");
  });
});
