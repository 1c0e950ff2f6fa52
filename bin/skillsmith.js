#!/usr/bin/env node
// The package's bin runs the build (dist/, made by `npm run build`, which `npm ci` and `npm test` run).
await import('../dist/workers/main.js');
