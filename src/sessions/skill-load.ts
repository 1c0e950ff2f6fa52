import type pg from 'pg';
import { z } from 'zod';
import { storableString } from '../input/storable-text.ts';
import { SkillPinMismatch } from '../skills/skill-errors.ts';
import { checkMemberPath } from '../skills/skill-package.ts';
import { countTokens } from '../skills/token-count.ts';
import { withTransaction } from '../store/database.ts';
import { openSkillPackageMember } from '../store/skill-package-store.ts';
import type { SkillRepository } from '../store/skill-repository.ts';
import type { TrustLevel } from '../skills/skill-revision.ts';
import { sha256Hex } from './catalog.ts';
import {
  McpSkillHasNoPackage,
  SessionNotFound,
  SkillBodyBudgetExceeded,
  SkillBodyCapReached,
  SkillMemberNotText,
  SkillNotInCatalog,
} from './session-errors.ts';
import { compareAndSetLoaded, findSession, type LoadedItem, type Session, type SessionPin } from './session-repository.ts';
import { recordSkillEvent } from '../store/skill-event-repository.ts';

/**
 * skill.load: `{name, path?, unload?}`. Only catalog names; sticky for the session; the same
 * item twice returns the same content; at most two loaded items (a third fails naming the two,
 * never evicting); unload frees a slot; `path` reads one package member (traversal refused);
 * everything loaded counts against the 6,000-token allowance; `missingTools` are the required
 * tools the session did not pin (the load still succeeds). Every load, unload and denial is a
 * skill event.
 */
export const LOADED_ITEM_LIMIT = 2;
export const LOADED_TOKEN_LIMIT = 6000;

export const skillLoadRequestSchema = z.strictObject({
  name: storableString().min(1).max(200),
  path: storableString().min(1).max(1024).optional(),
  unload: z.boolean().optional(),
});
export type SkillLoadRequest = z.infer<typeof skillLoadRequestSchema>;

export interface LoadedContent {
  kind: 'loaded';
  name: string;
  path: string | null;
  content: string;
  revision: number;
  trust: TrustLevel;
  missingTools: string[];
  tokens: number;
  /** True when this exact item was already loaded (nothing changed). */
  alreadyLoaded: boolean;
  loaded: LoadedItem[];
}

export interface UnloadedResult {
  kind: 'unloaded';
  name: string;
  unloaded: LoadedItem[];
  loaded: LoadedItem[];
}

export type SkillLoadResult = LoadedContent | UnloadedResult;

export interface LoadLimits {
  itemLimit: number;
  tokenLimit: number;
}

const DEFAULT_LIMITS: LoadLimits = { itemLimit: LOADED_ITEM_LIMIT, tokenLimit: LOADED_TOKEN_LIMIT };

function sameItem(item: LoadedItem, name: string, path: string | null): boolean {
  return item.name === name && item.path === path;
}

function describeItem(item: LoadedItem): string {
  return item.path === null ? item.name : `${item.name}:${item.path}`;
}

/** Pure: may `candidate` join `loaded`? Throws the denial, or returns the new loaded list. */
export function planLoad(loaded: readonly LoadedItem[], candidate: LoadedItem, limits: LoadLimits = DEFAULT_LIMITS): LoadedItem[] {
  if (loaded.some((item) => sameItem(item, candidate.name, candidate.path))) return [...loaded];
  if (loaded.length >= limits.itemLimit) throw new SkillBodyCapReached(loaded.map(describeItem), limits.itemLimit);
  const loadedTokens = loaded.reduce((sum, item) => sum + item.tokens, 0);
  if (loadedTokens + candidate.tokens > limits.tokenLimit) {
    throw new SkillBodyBudgetExceeded(candidate.tokens, loadedTokens, limits.tokenLimit);
  }
  return [...loaded, candidate];
}

/** Pure: the loaded list without `name` (only `path` when given, else every item of the skill). */
export function planUnload(
  loaded: readonly LoadedItem[],
  name: string,
  path: string | null,
): { kept: LoadedItem[]; removed: LoadedItem[] } {
  const matches = (item: LoadedItem) => item.name === name && (path === null || item.path === path);
  return { kept: loaded.filter((item) => !matches(item)), removed: loaded.filter(matches) };
}

export interface SkillLoadDependencies {
  pool: pg.Pool;
  skills: SkillRepository;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The item's text and its token count: a revision's body was counted at install (body_tokens), anything else is counted here. */
async function readContent(
  { pool, skills }: SkillLoadDependencies,
  session: Session,
  pin: SessionPin,
  path: string | null,
): Promise<{ content: string; tokens: number }> {
  if (pin.source === 'mcp') {
    if (path !== null) throw new McpSkillHasNoPackage(pin.name);
    const prompt = session.mcpPrompts.find((candidate) => candidate.skillName === pin.name);
    if (!prompt) throw new Error(`session ${session.id} pins MCP skill ${pin.name} but holds no prompt for it`);
    return { content: prompt.text, tokens: countTokens(prompt.text) };
  }
  // A pin resolves to its exact revision, archived or not; never through a floating ref.
  const revision = await skills.resolve(session.tenantId, { name: pin.name, revision: pin.revision });
  if (revision.contentSha256 !== pin.contentSha256) throw new SkillPinMismatch(pin, revision.contentSha256);
  if (path === null) return { content: revision.body, tokens: revision.bodyTokens };
  const bytes = await openSkillPackageMember(pool, session.tenantId, revision.packageKey, checkMemberPath(path));
  let content: string;
  try {
    content = utf8.decode(bytes);
  } catch {
    throw new SkillMemberNotText(path);
  }
  return { content, tokens: countTokens(content) };
}

const DENIALS = [SkillNotInCatalog, SkillBodyCapReached, SkillBodyBudgetExceeded];

export async function loadSkill(
  deps: SkillLoadDependencies,
  tenantId: string,
  sessionId: string,
  request: SkillLoadRequest,
): Promise<SkillLoadResult> {
  const parsed = skillLoadRequestSchema.parse(request);
  const path = parsed.path ?? null;
  try {
    return await attemptLoad(deps, tenantId, sessionId, parsed.name, path, parsed.unload === true);
  } catch (error) {
    const denial = DENIALS.find((denied) => error instanceof denied);
    if (denial) {
      await recordSkillEvent(deps.pool, tenantId, {
        sessionId,
        kind: 'skill.load.denied',
        name: parsed.name,
        revision: null,
        reason: denial.code,
        detail: { path, message: (error as Error).message },
      });
    }
    throw error;
  }
}

async function attemptLoad(
  deps: SkillLoadDependencies,
  tenantId: string,
  sessionId: string,
  name: string,
  path: string | null,
  unload: boolean,
): Promise<SkillLoadResult> {
  for (let attempt = 0; ; attempt++) {
    const session = await findSession(deps.pool, tenantId, sessionId);
    if (!session) throw new SessionNotFound(sessionId);
    const pin = session.pins.find((candidate) => candidate.name === name);
    if (!pin)
      throw new SkillNotInCatalog(
        name,
        session.pins.map((candidate) => candidate.name),
      );

    if (unload) {
      const { kept, removed } = planUnload(session.loaded, name, path);
      const committed = await withTransaction(deps.pool, async (client) => {
        if (removed.length > 0 && !(await compareAndSetLoaded(client, tenantId, sessionId, session.loadedVersion, kept))) {
          return false;
        }
        await recordSkillEvent(client, tenantId, {
          sessionId,
          kind: 'skill.unload',
          name,
          revision: pin.revision,
          detail: { path, unloaded: removed.map(describeItem) },
        });
        return true;
      });
      if (committed) return { kind: 'unloaded', name, unloaded: removed, loaded: removed.length > 0 ? kept : session.loaded };
    } else {
      const { content, tokens } = await readContent(deps, session, pin, path);
      const alreadyLoaded = session.loaded.some((item) => sameItem(item, name, path));
      const item: LoadedItem = { name, path, revision: pin.revision, tokens, contentSha256: sha256Hex(content) };
      const next = planLoad(session.loaded, item);
      const missingTools = pin.requiredTools.filter((tool) => !session.tools.includes(tool));
      const committed = await withTransaction(deps.pool, async (client) => {
        if (!alreadyLoaded && !(await compareAndSetLoaded(client, tenantId, sessionId, session.loadedVersion, next))) {
          return false;
        }
        await recordSkillEvent(client, tenantId, {
          sessionId,
          kind: 'skill.load',
          name,
          revision: pin.revision,
          detail: {
            path,
            trust: pin.trust,
            missingTools,
            tokens,
            bytes: Buffer.byteLength(content, 'utf8'),
            alreadyLoaded,
          },
        });
        return true;
      });
      if (committed) {
        return {
          kind: 'loaded',
          name,
          path,
          content,
          revision: pin.revision,
          trust: pin.trust,
          missingTools,
          tokens,
          alreadyLoaded,
          loaded: next,
        };
      }
    }
    // Another load on the same session won the compare-and-swap: re-read and decide again.
    if (attempt >= 8) throw new Error(`session ${sessionId}: too many concurrent skill.load calls`);
  }
}
