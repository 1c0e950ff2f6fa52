import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiTokensInvalid, createAuthenticator, loadApiTokens, ScopeMissing, Unauthorized } from '../../src/api/auth.ts';
import { ConfigError, loadConfig } from '../../src/app/config.ts';

const entry = { token: 'token-for-acme-0123456789', tenantId: 'acme', principal: 'ops', scopes: ['session.write'] };

describe('API settings and bearer tokens', () => {
  it('defaults to 127.0.0.1:8080, a 1 MiB body limit, no tokens, and a 4 KB sync warning', () => {
    expect(loadConfig({}).api).toEqual({ host: '127.0.0.1', port: 8080, tokens: undefined, bodyLimitBytes: 1_048_576 });
    expect(loadConfig({}).skillSyncMaxBytes).toBe(4096);
    expect(() => loadConfig({ SKILLSMITH_API_PORT: 'eighty' })).toThrow(ConfigError);
    expect(() => loadConfig({ SKILLSMITH_API_BODY_LIMIT: '0' })).toThrow(/SKILLSMITH_API_BODY_LIMIT/);
  });

  it('reads tokens inline or from a file, and refuses bad ones naming the field', async () => {
    expect(loadApiTokens(JSON.stringify([entry]))).toEqual([{ ...entry, maxOriginTrust: 'user' }]);
    const directory = await mkdtemp(join(tmpdir(), 'skillsmith-tokens-'));
    try {
      const file = join(directory, 'tokens.json');
      await writeFile(file, JSON.stringify([entry]));
      expect(loadApiTokens(file)).toEqual([{ ...entry, maxOriginTrust: 'user' }]);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
    expect(loadApiTokens(undefined)).toEqual([]);
    expect(() => loadApiTokens('[{"token": "short", "tenantId": "acme", "principal": "p", "scopes": []}]')).toThrow(/0\.token/);
    expect(() => loadApiTokens(JSON.stringify([{ ...entry, tenantId: 'Not A Tenant' }]))).toThrow(ApiTokensInvalid);
    expect(() => loadApiTokens(JSON.stringify([entry, { ...entry, tenantId: 'globex' }]))).toThrow(/same token twice/);
    expect(() => loadApiTokens(JSON.stringify([{ ...entry, extra: true }]))).toThrow(ApiTokensInvalid);
    expect(() => loadApiTokens('/no/such/file.json')).toThrow(/cannot read/);
    // The highest origin trust a token's turns may claim: `user` unless configured.
    expect(loadApiTokens(JSON.stringify([{ ...entry, maxOriginTrust: 'operator' }]))[0]?.maxOriginTrust).toBe('operator');
    expect(() => loadApiTokens(JSON.stringify([{ ...entry, maxOriginTrust: 'root' }]))).toThrow(/0\.maxOriginTrust/);
  });

  it('maps a token to its tenant and principal and matches scopes by exact string equality', () => {
    const authenticator = createAuthenticator([
      entry,
      { ...entry, token: 'token-for-globex-0123456789', tenantId: 'globex', scopes: ['session.*'] },
    ]);
    const principal = authenticator.authenticate(`Bearer ${entry.token}`);
    expect(principal).toMatchObject({ tenantId: 'acme', principal: 'ops' });
    expect(() => authenticator.authorize(principal, 'session.write')).not.toThrow();
    expect(() => authenticator.authorize(principal, 'session.read')).toThrow(ScopeMissing);
    expect(() => authenticator.authorize(principal, 'session.writ')).toThrow(ScopeMissing);
    const wildcard = authenticator.authenticate('Bearer token-for-globex-0123456789');
    expect(() => authenticator.authorize(wildcard, 'session.write')).toThrow(ScopeMissing);
    for (const header of [undefined, '', `bearer ${entry.token}`, `Bearer ${entry.token} extra`, `Bearer ${entry.token}x`, 'Bearer ']) {
      expect(() => authenticator.authenticate(header)).toThrow(Unauthorized);
    }
  });
});
