import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CLI_BUNDLE_FILE, currentCliBundle } from '../../workers/build-bundles.ts';
import { runSkillsmith } from '../support/cli.ts';
import { openTestDatabase } from '../support/database.ts';

describe('usage: --version, help, usage errors', () => {
  it('--version prints the package version', async () => {
    const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8'));
    const run = await runSkillsmith(['--version']);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`${version}\n`);
  });

  it('--help, --version and commands that need neither load Temporal or the embedding model', async () => {
    const preload = `--import=${fileURLToPath(new URL('../support/loaded-packages.js', import.meta.url))}`;
    const heavy = /node_modules\/(@temporalio\/(worker|client)|onnxruntime-node|@huggingface\/transformers)\//;
    const loaded = async (args: string[], env: Record<string, string> = {}) => {
      const run = await runSkillsmith(args, { NODE_OPTIONS: preload, ...env });
      const line = run.stderr.split('\n').find((text) => text.startsWith('loaded-modules '));
      return { code: run.code, heavy: (JSON.parse(line!.slice('loaded-modules '.length)) as string[]).filter((path) => heavy.test(path)) };
    };
    for (const args of [['--help'], ['--version'], ['synthesize', '--help'], ['models', 'list', '--json']]) {
      expect(await loaded(args), args.join(' ')).toEqual({ code: 0, heavy: [] });
    }
    // A command that opens the services (database, repositories, the API's lazy Temporal client)
    // and never reaches Temporal: importing its SDK cost ~0.45 s of CPU per command.
    const database = await openTestDatabase();
    try {
      expect(await loaded(['skills', 'list', '--json'], { DATABASE_URL: database.url })).toEqual({ code: 0, heavy: [] });
    } finally {
      await database.close();
    }
    // The check sees them when a command does need them: Temporal's client, loaded to reach a server.
    const needsTemporal = await loaded(['passes', 'cancel', 'x'], { TEMPORAL_ADDRESS: '127.0.0.1:1' });
    expect(needsTemporal.code).toBe(1);
    expect(needsTemporal.heavy.some((path) => path.includes('@temporalio/client'))).toBe(true);
  });

  it("the build leaves the CLI's bundle current, so the bin runs it rather than the modules", () => {
    const dist = fileURLToPath(new URL('../../dist/', import.meta.url));
    expect(currentCliBundle(dist)).toBe(join(dist, CLI_BUNDLE_FILE));
  });

  it("a subcommand's help shows the global options and an example", async () => {
    const run = await runSkillsmith(['passes', 'show', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/Global Options:[\s\S]*--tenant <tenant>[\s\S]*--json/);
    expect(run.stdout).toMatch(/Example:\n {2}skillsmith passes show <id> --tenant acme --json\n/);
  });

  it("an example names a command's required options, and a command with examples of its own prints only those", async () => {
    const sync = await runSkillsmith(['skills', 'sync', '--help']);
    expect(sync.stdout).toMatch(/Example:\n {2}skillsmith skills sync --dir <dir> --tenant acme --json\n/);
    const ingest = await runSkillsmith(['ingest', '--help']);
    expect(ingest.stdout.match(/^Examples?:$/gm)).toEqual(['Examples:']);
    expect(ingest.stdout).toMatch(
      /Examples:\n {2}skillsmith ingest runs\.jsonl --tenant acme\n {2}skillsmith ingest transcripts\.jsonl --format anthropic/,
    );
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
