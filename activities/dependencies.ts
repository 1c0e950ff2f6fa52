import type pg from 'pg';
import type { SkillManage } from '../src/authoring/skill-manage.ts';
import type { Config } from '../src/config.ts';
import type { Embedder } from '../src/embedding/embedder.ts';
import type { ChatClient } from '../src/llm/chat-client.ts';
import type { Logger } from '../src/logger.ts';
import type { SkillRepository } from '../src/store/skill-repository.ts';
import type { Distiller } from '../src/synthesis/distiller.ts';

/** What every activity factory receives from the composition root (workers/). */
export interface ActivityDependencies {
  pool: pg.Pool;
  config: Config;
  logger: Logger;
  skills: SkillRepository;
  skillManage: SkillManage;
  /** Loaded on first use, once per process; a missing model fails the activity that needs it. */
  embedder(): Promise<Embedder>;
  /** The configured distiller; throws LlmNotConfigured when the LLM is chosen but not configured. */
  distiller(): Distiller;
  /** The reviewer's LLM; throws LlmNotConfigured when none is configured. */
  reviewer(): ChatClient;
}
