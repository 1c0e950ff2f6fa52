import type pg from 'pg';
import { z } from 'zod';
import { storableString } from '../input/storable-text.ts';
import { parseSkillRef, SkillRefInvalid, type SkillRef } from '../skills/skill-ref.ts';
import { toolNameSchema } from '../input/tool-name.ts';
import { withTransaction } from '../store/database.ts';
import { refNotFound, type SkillRepository } from '../store/skill-repository.ts';
import type { AgentSpecRepository } from './agent-spec-repository.ts';
import { agentIdSchema } from './agent-spec-repository.ts';
import { buildCatalog, sha256Hex, type CatalogCandidate } from './catalog.ts';
import { DuplicateSkillName, SkillRefsUnresolved } from './session-errors.ts';
import { insertSession, type Session, type SessionMcpPrompt, type SessionPin } from './session-repository.ts';
import { recordSkillEvent } from '../store/skill-event-repository.ts';

/**
 * Session open: resolve every ref of the agent spec once into pins (an unknown ref fails the
 * open, quoted), append the MCP prompts as read-only session skills (revision 0, sha256 of the
 * text as it arrived — never a skill revision), build the capped catalog, and record the
 * session with a `session.created` event carrying the pins and the dropped entries.
 */
const mcpIdentifier = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, '1-64 characters of A-Z a-z 0-9 _ . -');

export const mcpPromptSchema = z.strictObject({
  server: mcpIdentifier,
  name: mcpIdentifier,
  description: storableString().min(1).max(1000),
  text: storableString().min(1).max(200_000),
});

export const openSessionRequestSchema = z.strictObject({
  agentId: agentIdSchema,
  agentSpecVersion: z.number().int().positive().optional(),
  tools: z.array(toolNameSchema).max(256),
  mcpPrompts: z.array(mcpPromptSchema).max(100).optional(),
});
export type OpenSessionRequest = z.infer<typeof openSessionRequestSchema>;

export interface SessionDependencies {
  pool: pg.Pool;
  skills: SkillRepository;
  agentSpecs: AgentSpecRepository;
}

export function mcpSkillName(server: string, name: string): string {
  return `${server}/${name}`;
}

export function mcpCandidate(prompt: SessionMcpPrompt): CatalogCandidate {
  return {
    name: prompt.skillName,
    revision: 0,
    contentSha256: prompt.contentSha256,
    source: 'mcp',
    trust: 'external_untrusted',
    manifest: { name: prompt.skillName, version: '0', description: prompt.description, requiredTools: [] },
  };
}

export function pinCandidate(pin: SessionPin): CatalogCandidate {
  return {
    name: pin.name,
    revision: pin.revision,
    contentSha256: pin.contentSha256,
    source: pin.source,
    trust: pin.trust,
    manifest: { name: pin.name, version: pin.version, description: pin.description, requiredTools: pin.requiredTools },
  };
}

export async function resolveCandidates(skills: SkillRepository, tenantId: string, refs: readonly string[]): Promise<CatalogCandidate[]> {
  // Every ref parsed first (a duplicate name fails the open), then all resolved in one statement:
  // an open costs one read of the skill table, not one per ref.
  const parsed: (SkillRef | SkillRefInvalid)[] = [];
  const seen = new Set<string>();
  for (const text of refs) {
    let ref: SkillRef;
    try {
      ref = parseSkillRef(text);
    } catch (error) {
      if (!(error instanceof SkillRefInvalid)) throw error;
      parsed.push(error);
      continue;
    }
    if (seen.has(ref.name)) throw new DuplicateSkillName(ref.name, 'the agent spec');
    seen.add(ref.name);
    parsed.push(ref);
  }
  const valid = parsed.filter((entry): entry is SkillRef => !(entry instanceof SkillRefInvalid));
  const revisions = await skills.findCatalogRevisions(tenantId, valid);
  const found = new Map(valid.map((ref, index) => [ref, revisions[index]]));
  const unresolved: { ref: string; reason: string }[] = [];
  const candidates: CatalogCandidate[] = [];
  parsed.forEach((entry, index) => {
    if (entry instanceof SkillRefInvalid) {
      unresolved.push({ ref: refs[index]!, reason: entry.message });
      return;
    }
    const revision = found.get(entry);
    if (!revision) {
      unresolved.push({ ref: refs[index]!, reason: refNotFound(entry).message });
      return;
    }
    candidates.push({
      name: revision.name,
      revision: revision.revision,
      contentSha256: revision.contentSha256,
      source: revision.source,
      trust: revision.trust,
      manifest: revision.manifest,
    });
  });
  if (unresolved.length > 0) throw new SkillRefsUnresolved(unresolved);
  return candidates;
}

export async function openSession(
  { pool, skills, agentSpecs }: SessionDependencies,
  tenantId: string,
  request: OpenSessionRequest,
): Promise<Session> {
  const parsed = openSessionRequestSchema.parse(request);
  const spec = await agentSpecs.get(tenantId, parsed.agentId, parsed.agentSpecVersion);
  const configured = await resolveCandidates(skills, tenantId, spec.enabledSkills);
  const mcpPrompts: SessionMcpPrompt[] = [];
  const names = new Set(configured.map((candidate) => candidate.name));
  for (const prompt of parsed.mcpPrompts ?? []) {
    const skillName = mcpSkillName(prompt.server, prompt.name);
    if (names.has(skillName)) throw new DuplicateSkillName(skillName, 'the MCP prompts');
    names.add(skillName);
    mcpPrompts.push({ ...prompt, skillName, contentSha256: sha256Hex(prompt.text) });
  }
  const catalog = buildCatalog([...configured, ...mcpPrompts.map(mcpCandidate)]);
  const pins: SessionPin[] = catalog.entries.map((entry) => ({
    name: entry.name,
    revision: entry.revision,
    contentSha256: entry.contentSha256,
    source: entry.source,
    trust: entry.trust,
    version: entry.manifest.version,
    description: entry.manifest.description,
    requiredTools: [...entry.manifest.requiredTools],
  }));
  const pinnedNames = new Set(pins.map((pin) => pin.name));
  return withTransaction(pool, async (client) => {
    const session = await insertSession(client, tenantId, {
      agentId: spec.agentId,
      agentSpecVersion: spec.version,
      tools: parsed.tools,
      pins,
      catalog: catalog.text,
      catalogSha256: catalog.sha256,
      dropped: catalog.dropped,
      // Prompts the cap dropped are not held: they cannot be loaded.
      mcpPrompts: mcpPrompts.filter((prompt) => pinnedNames.has(prompt.skillName)),
    });
    await recordSkillEvent(client, tenantId, {
      sessionId: session.id,
      kind: 'session.created',
      name: null,
      revision: null,
      detail: {
        agentId: spec.agentId,
        agentSpecVersion: spec.version,
        pins: pins.map(({ name, revision, contentSha256 }) => ({ name, revision, contentSha256 })),
        dropped: catalog.dropped,
        droppedCount: catalog.dropped.length,
        catalogSha256: catalog.sha256,
        catalogTokens: catalog.tokens,
      },
    });
    return session;
  });
}
