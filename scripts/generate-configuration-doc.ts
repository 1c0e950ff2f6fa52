// Writes docs/configuration.md from the environment schema (npm run docs:configuration).
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderConfigurationDoc } from '../src/app/configuration-doc.ts';

const target = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));
writeFileSync(target, renderConfigurationDoc());
console.log(`wrote ${target}`);
