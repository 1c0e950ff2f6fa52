import { z } from 'zod';
import type { SkillManifest } from './skill-format.ts';

/**
 * A skill revision as the domain sees it: one immutable, validated version of a skill, with
 * where it came from (its source), how far it is trusted and who wrote it. The skill
 * repository persists these; sessions, authoring and the API read them.
 */
export const skillSourceSchema = z.enum(['builtin', 'operator', 'agent', 'mcp']);
export type SkillSource = z.infer<typeof skillSourceSchema>;
export type SkillStatus = 'active' | 'archived';
export type TrustLevel = 'trusted_configuration' | 'external_untrusted';

export const authoringContextSchema = z.object({
  runId: z.string().min(1),
  principalId: z.string().min(1),
  invocationId: z.string().min(1),
  idempotencyKey: z.string().min(1),
});
/** Who wrote a revision — present when and only when the source is `agent`. */
export type AuthoringContext = z.infer<typeof authoringContextSchema>;

export interface SkillRevision {
  id: string;
  skillId: string;
  tenantId: string;
  name: string;
  revision: number;
  manifest: SkillManifest;
  body: string;
  bodyTokens: number;
  contentSha256: string;
  packageKey: string;
  packageBytes: number;
  fileCount: number;
  source: SkillSource;
  trust: TrustLevel;
  status: SkillStatus;
  /** null for builtin/operator; runId may be null after governed session erasure. */
  authoredBy: { runId: string | null; principalId: string; invocationId: string; idempotencyKey: string } | null;
  archivedByInvocationId: string | null;
  archiveIdempotencyKey: string | null;
  createdAt: Date;
}

export function trustForSource(source: SkillSource): TrustLevel {
  return source === 'builtin' || source === 'operator' ? 'trusted_configuration' : 'external_untrusted';
}
