#!/usr/bin/env node
// The package's bin: TypeScript runs directly through tsx, so there is no build step to forget.
import { register } from 'tsx/esm/api';

register();
await import('../workers/main.ts');
