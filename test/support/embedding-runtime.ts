import { loadConfig } from '../../src/app/config.ts';
import { useEmbeddingRuntime } from '../../src/embedding/embedding-runtime.ts';

// The runtime where `npm test`'s `skillsmith models pull` installed it (the CLI's own resolution:
// SKILLSMITH_EMBEDDING_RUNTIME_DIR, else $SKILLSMITH_HOME/runtime), for the tests that embed or
// cluster without building the services.
useEmbeddingRuntime(loadConfig(process.env).embeddingRuntimeDir);
