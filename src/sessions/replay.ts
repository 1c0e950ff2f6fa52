import type pg from 'pg';
import { z } from 'zod';
import type { SkillPin } from '../skills/skill-ref.ts';
import type { SkillRepository } from '../store/skill-repository.ts';
import { renderCatalogText, sha256Hex, type CatalogCandidate } from './catalog.ts';
import { CatalogDrift, McpPromptChanged, SessionNotFound } from './session-errors.ts';
import { mcpCandidate, mcpPromptSchema, mcpSkillName, pinCandidate } from './session-open.ts';
import { findSession } from './session-repository.ts';

/**
 * Replay resolves a session's pins — never its refs — and compares content_sha256: each stored
 * archive is re-hashed (SkillPinMismatch on any difference). MCP pins are checked against the
 * prompts the caller supplies now (the server may have changed them), or, when none are
 * supplied, against the text recorded at open. The catalog is re-rendered from the pinned
 * revisions and must hash to what the session recorded.
 */
export const replayRequestSchema = z.strictObject({
  mcpPrompts: z.array(mcpPromptSchema).max(100).optional(),
});
export type ReplayRequest = z.infer<typeof replayRequestSchema>;

export interface ReplayResult {
  sessionId: string;
  pins: (SkillPin & { source: string })[];
  catalogSha256: string;
}

export async function replaySession(
  { pool, skills }: { pool: pg.Pool; skills: SkillRepository },
  tenantId: string,
  sessionId: string,
  request: ReplayRequest = {},
): Promise<ReplayResult> {
  const parsed = replayRequestSchema.parse(request);
  const session = await findSession(pool, tenantId, sessionId);
  if (!session) throw new SessionNotFound(sessionId);
  const stored = session.pins.filter((pin) => pin.source !== 'mcp');
  const revisions = await skills.verifyPins(
    tenantId,
    stored.map(({ name, revision, contentSha256 }) => ({ name, revision, contentSha256 })),
  );
  const byName = new Map(revisions.map((revision) => [revision.name, revision]));
  const supplied = parsed.mcpPrompts
    ? new Map(parsed.mcpPrompts.map((prompt) => [mcpSkillName(prompt.server, prompt.name), prompt]))
    : null;
  const candidates: CatalogCandidate[] = session.pins.map((pin) => {
    const pinShape = { name: pin.name, revision: pin.revision, contentSha256: pin.contentSha256 };
    if (pin.source === 'mcp') {
      const recorded = session.mcpPrompts.find((prompt) => prompt.skillName === pin.name);
      const current = supplied ? supplied.get(pin.name) : recorded;
      if (!current) throw new McpPromptChanged(pinShape, null);
      const actual = sha256Hex(current.text);
      if (actual !== pin.contentSha256) throw new McpPromptChanged(pinShape, actual);
      return mcpCandidate({ ...current, skillName: pin.name, contentSha256: actual });
    }
    const revision = byName.get(pin.name)!;
    return pinCandidate({
      ...pin,
      version: revision.manifest.version,
      description: revision.manifest.description,
      requiredTools: revision.manifest.requiredTools,
    });
  });
  const catalogSha256 = sha256Hex(renderCatalogText(candidates));
  if (catalogSha256 !== session.catalogSha256) throw new CatalogDrift(session.catalogSha256, catalogSha256);
  return {
    sessionId: session.id,
    pins: session.pins.map(({ name, revision, contentSha256, source }) => ({ name, revision, contentSha256, source })),
    catalogSha256,
  };
}
