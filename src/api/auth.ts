import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { originTrustSchema, type OriginTrust } from '../authoring/skill-manage-contract.ts';
import { storableString } from '../input/storable-text.ts';
import { tenantIdSchema } from '../input/tenant-id.ts';
import { LOCAL_TOKEN_SCOPES, verifyLocalToken } from './local-token.ts';
import { SkillsmithError } from '../errors/skillsmith-error.ts';

/**
 * Bearer tokens from configuration (SKILLSMITH_API_TOKENS): a JSON array of
 * `{token, tenantId, principal, scopes[], maxOriginTrust?}`, or the path of a file holding one.
 * Each token maps to exactly one tenant; a request's tenant always comes from its token. Scopes
 * match by exact string equality — `session.write` grants nothing but `session.write`.
 * `maxOriginTrust` (default `user`) is the highest origin trust the token's caller may claim for
 * a turn: a runtime that can be steered by what it reads must not name itself `operator`.
 */
export const API_SCOPES = ['session.write', 'session.read', 'skill.read', 'recall.read'] as const;

const tokenEntrySchema = z.strictObject({
  token: z.string().min(16, 'a token is at least 16 characters'),
  tenantId: tenantIdSchema,
  principal: storableString().min(1).max(200),
  scopes: z.array(z.string().min(1).max(100)),
  maxOriginTrust: originTrustSchema.default('user'),
});
export const apiTokensSchema = z.array(tokenEntrySchema);
export type ApiTokenEntry = z.input<typeof tokenEntrySchema>;

export interface Principal {
  tenantId: string;
  principal: string;
  scopes: ReadonlySet<string>;
  maxOriginTrust: OriginTrust;
}

/** A turn claims a higher origin trust than its token may: refused before skill_manage runs. */
export class OriginTrustNotAllowed extends SkillsmithError {
  static override readonly code = 'OriginTrustNotAllowed';
  static override readonly httpStatus = 403;
  readonly field = 'originTrust';
  constructor(
    readonly originTrust: OriginTrust,
    readonly maxOriginTrust: OriginTrust,
  ) {
    super(`originTrust ${JSON.stringify(originTrust)} is above this token's maxOriginTrust ${JSON.stringify(maxOriginTrust)}`);
  }
}

export class ApiTokensInvalid extends SkillsmithError {
  static override readonly code = 'ApiTokensInvalid';
}

export class Unauthorized extends SkillsmithError {
  static override readonly code = 'Unauthorized';
  static override readonly httpStatus = 401;
}

export class ScopeMissing extends SkillsmithError {
  static override readonly code = 'ScopeMissing';
  static override readonly httpStatus = 403;
  constructor(readonly scope: string) {
    super(`this token lacks the scope ${JSON.stringify(scope)}`);
  }
}

/** Parses SKILLSMITH_API_TOKENS: inline JSON when it starts with `[`, else a file path. */
export function loadApiTokens(setting: string | undefined): ApiTokenEntry[] {
  if (setting === undefined) return [];
  let text = setting;
  if (!setting.trimStart().startsWith('[')) {
    try {
      text = readFileSync(setting, 'utf8');
    } catch (error) {
      throw new ApiTokensInvalid(`SKILLSMITH_API_TOKENS: cannot read ${setting}: ${(error as Error).message}`);
    }
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ApiTokensInvalid(`SKILLSMITH_API_TOKENS is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = apiTokensSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ApiTokensInvalid(`SKILLSMITH_API_TOKENS[${issue?.path.join('.')}]: ${issue?.message}`);
  }
  const seen = new Set<string>();
  for (const entry of parsed.data) {
    if (seen.has(entry.token)) throw new ApiTokensInvalid('SKILLSMITH_API_TOKENS holds the same token twice');
    seen.add(entry.token);
  }
  return parsed.data;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

export interface Authenticator {
  /** The principal for an `Authorization` header value; Unauthorized otherwise. */
  authenticate(header: string | undefined): Principal;
  authorize(principal: Principal, scope: string): void;
}

/**
 * `localSecret`: the running stack's (local-token.ts); a local token made with it is the CLI on
 * this machine, for the tenant it names, with LOCAL_TOKEN_SCOPES.
 */
export function createAuthenticator(entries: readonly ApiTokenEntry[], localSecret?: string): Authenticator {
  const table = entries.map((entry) => ({
    digest: digest(entry.token),
    principal: {
      tenantId: entry.tenantId,
      principal: entry.principal,
      scopes: new Set(entry.scopes),
      maxOriginTrust: entry.maxOriginTrust ?? 'user',
    } satisfies Principal,
  }));
  return {
    authenticate(header) {
      if (header === undefined || header.length === 0) throw new Unauthorized('missing Authorization: Bearer <token>');
      const match = /^Bearer ([\x21-\x7e]+)$/.exec(header);
      if (!match) throw new Unauthorized('the Authorization header is not "Bearer <token>"');
      const localTenant = localSecret === undefined ? undefined : verifyLocalToken(localSecret, match[1]!);
      if (localTenant !== undefined) {
        return { tenantId: localTenant, principal: 'skillsmith-cli', scopes: new Set(LOCAL_TOKEN_SCOPES), maxOriginTrust: 'user' };
      }
      const presented = digest(match[1]!);
      // Compare every entry in constant time per entry, so the match position does not leak.
      let found: Principal | undefined;
      for (const entry of table) {
        if (timingSafeEqual(entry.digest, presented) && found === undefined) found = entry.principal;
      }
      if (!found) throw new Unauthorized('unknown bearer token');
      return found;
    },
    authorize(principal, scope) {
      if (!principal.scopes.has(scope)) throw new ScopeMissing(scope);
    },
  };
}
