// Preloaded with `node --import` by test/cli/usage.test.ts: when the process exits, writes the
// CommonJS modules it loaded as one line on stderr. Temporal's SDK and onnxruntime (which the
// embedder's transformers.js loads) are CommonJS, so this shows whether a command loaded them.
import { createRequire } from 'node:module';
import process from 'node:process';

const require = createRequire(import.meta.url);
process.on('exit', () => process.stderr.write(`loaded-modules ${JSON.stringify(Object.keys(require.cache))}\n`));
