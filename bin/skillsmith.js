#!/usr/bin/env node
// The package's bin runs the build (dist/, made by `npm run build`, which `npm ci` and `npm test` run).
// It composes the CLI (src/cli) with the worker runtime (workers/); neither imports the other.
import process from 'node:process';

const { runCli } = await import('../dist/src/cli/main.js');
const { createWorkerRuntime } = await import('../dist/workers/runtime.js');
process.exit(await runCli(process.argv.slice(2), createWorkerRuntime));
