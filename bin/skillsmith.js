#!/usr/bin/env node
// The package's bin runs the build (dist/, made by `npm run build`, which `npm ci` and `npm test` run).
// It composes the CLI (src/cli) with the worker runtime (workers/); neither imports the other.
import { readFileSync } from 'node:fs';
import process from 'node:process';
import { fileURLToPath, pathToFileURL, URL } from 'node:url';

// A reader that stops early (`skillsmith … | head`) closes the pipe: the rest of the output is not
// wanted, so a failed write is dropped and the command finishes as it would have, without a stack trace.
process.stdout.on('error', (error) => {
  if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
});
// The build's bundle of the CLI starts in a quarter less CPU than its hundreds of modules
// (scripts/bundle-cli.js); the modules serve when the bundle is missing or older than they are.
const { currentCliBundle } = await import('../dist/workers/build-bundles.js');
const bundle = currentCliBundle(fileURLToPath(new URL('../dist/', import.meta.url)));
const [{ runCli }, { createWorkerRuntime }] = bundle
  ? await import(pathToFileURL(bundle).href).then((cli) => [cli, cli])
  : await Promise.all([import('../dist/src/cli/main.js'), import('../dist/workers/runtime.js')]);
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const code = await runCli(process.argv.slice(2), createWorkerRuntime, version);
// process.exit() drops what a pipe has not taken yet (piped --json was cut at 64 KiB): wait until
// stdout and stderr have handed over every byte, then exit (a native handle may keep the loop alive).
await Promise.all([process.stdout, process.stderr].map((stream) => new Promise((resolve) => stream.write('', resolve))));
process.exit(code);
