// The workflows bundled once at build time (dist/workflows/workflow-bundle.js): a worker started
// from dist/ (`skillsmith worker`, `up`, `demo`, `eval`) loads it instead of bundling them itself,
// seconds of CPU at every start. workers/worker.ts uses it only while it is newer than every
// compiled module it was made from.
import { writeFileSync } from 'node:fs';
import { fileURLToPath, URL } from 'node:url';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';

const workflowsPath = fileURLToPath(new URL('../dist/workflows/index.js', import.meta.url));
const { code } = await bundleWorkflowCode({ workflowsPath, logger: new DefaultLogger('WARN') });
writeFileSync(new URL('../dist/workflows/workflow-bundle.js', import.meta.url), code);
