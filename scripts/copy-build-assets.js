// The files the build reads at run time besides the compiled modules, copied to the same place
// relative to them in dist/ as in the sources (schema/ next to src/, the demo sample inside it).
import { cpSync, rmSync } from 'node:fs';

const assets = ['schema', 'src/demo/sample-runs.jsonl'];

for (const asset of assets) {
  rmSync(`dist/${asset}`, { recursive: true, force: true });
  cpSync(asset, `dist/${asset}`, { recursive: true });
}
