// The CLI bundled once at build time (dist/cli/): bin/skillsmith.js loads it instead of the
// hundreds of compiled modules and package files a command would otherwise resolve and load one by
// one: a quarter of every command's start-up CPU. Lazy imports stay lazy (split into chunks).
// Kept outside: packages with native code, WASM or files found next to their own modules
// (Temporal's SDK, PGlite), which also keeps a command that never needs them from loading them.
// transformers.js and onnxruntime are no dependency: the embedding runtime loads them from its
// own directory (src/embedding/embedding-runtime.ts).
import { readFile, rm } from 'node:fs/promises';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const outdir = resolve(root, 'dist/cli');

// A compiled module finds its files (schema/, the demo sample, the workflows) from its own URL:
// inside a chunk, import.meta.url is the chunk's, so each module gets its original URL back.
const originalModuleUrls = {
  name: 'original-module-urls',
  setup(builder) {
    builder.onLoad({ filter: /[/\\]dist[/\\].*\.js$/ }, async ({ path }) => {
      const contents = await readFile(path, 'utf8');
      if (!contents.includes('import.meta.url')) return undefined;
      const fromChunk = relative(outdir, path).split('\\').join('/');
      return {
        contents: contents.replaceAll('import.meta.url', `new URL(${JSON.stringify(fromChunk)}, import.meta.url).href`),
        loader: 'js',
      };
    });
  },
};

await rm(outdir, { recursive: true, force: true });
await build({
  stdin: {
    contents: "export { runCli } from './dist/src/cli/main.js';\nexport { createWorkerRuntime } from './dist/workers/runtime.js';\n",
    resolveDir: root,
    sourcefile: 'skillsmith-cli.js',
  },
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  outdir,
  entryNames: 'skillsmith',
  chunkNames: 'chunk-[hash]',
  external: ['@temporalio/*', '@electric-sql/*', 'pg-native'],
  // The CommonJS packages inside the bundle require Node's built-ins; an ES module has no `require`.
  banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
  plugins: [originalModuleUrls],
  logLevel: 'warning',
});
