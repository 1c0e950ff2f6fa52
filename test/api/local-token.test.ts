import { describe, expect, it } from 'vitest';
import { createAuthenticator, Unauthorized } from '../../src/api/auth.ts';
import { createLocalSecret, localToken, verifyLocalToken } from '../../src/api/local-token.ts';

describe("the local token: the CLI on the stack's machine, for one tenant", () => {
  const secret = createLocalSecret();

  it('names exactly the tenant it was made for, and only with the secret that made it', () => {
    const token = localToken(secret, 'acme');
    expect(verifyLocalToken(secret, token)).toBe('acme');
    expect(verifyLocalToken(createLocalSecret(), token)).toBeUndefined();
    // Another tenant's name with acme's MAC is refused.
    const forged = token.replace(Buffer.from('acme').toString('base64url'), Buffer.from('globex').toString('base64url'));
    expect(verifyLocalToken(secret, forged)).toBeUndefined();
    expect(verifyLocalToken(secret, 'sk-local.')).toBeUndefined();
    expect(verifyLocalToken(secret, 'quickstart-token-0123456789')).toBeUndefined();
  });

  it("the stack's authenticator takes it as that tenant with recall.read only; without the secret it is unknown", () => {
    const header = `Bearer ${localToken(secret, 'acme')}`;
    const principal = createAuthenticator([], secret).authenticate(header);
    expect(principal).toMatchObject({ tenantId: 'acme', principal: 'skillsmith-cli' });
    expect([...principal.scopes]).toEqual(['recall.read']);
    expect(() => createAuthenticator([]).authenticate(header)).toThrow(Unauthorized);
    expect(() => createAuthenticator([], createLocalSecret()).authenticate(header)).toThrow(Unauthorized);
  });
});
