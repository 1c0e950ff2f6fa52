import { createConfiguredChatClient, type LlmSettings } from '../llm/configured-chat-client.ts';
import type { SynthesisSettings } from './synthesis-settings.ts';
import { createExtractiveDistiller, createLlmDistiller, type Distiller } from './distiller.ts';

/**
 * The distiller the configuration names. There is no fallback: an `llm` distiller whose model is
 * missing or down never turns into the extractive one.
 */
export function createConfiguredDistiller(config: {
  synthesis: Pick<SynthesisSettings, 'distiller'>;
  llm: LlmSettings;
  skillLicense: string;
}): Distiller {
  const license = config.skillLicense;
  if (config.synthesis.distiller === 'extractive') return createExtractiveDistiller({ license });
  return createLlmDistiller(
    createConfiguredChatClient(config, 'SKILLSMITH_DISTILLER=llm (choose SKILLSMITH_DISTILLER=extractive to distil without one)'),
    { license },
  );
}
