import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { tenantIdSchema } from '../input/tenant-id.ts';

/**
 * The local token: how a CLI on the stack's machine calls the stack's API without a configured
 * token. The stack draws a secret at start and keeps it in an owner-only file under the home (as
 * the stack file keeps the database password); a token names one tenant and carries the secret's
 * HMAC of it, `sk-local.<tenant, base64url>.<hmac, hex>`, so a token still maps to exactly one
 * tenant and reading the secret grants no more than reading the stack file already does.
 */
const PREFIX = 'sk-local.';

/** The scopes a local token grants: what the CLI asks the stack for. */
export const LOCAL_TOKEN_SCOPES = ['recall.read'] as const;

export function createLocalSecret(): string {
  return randomBytes(32).toString('hex');
}

const mac = (secret: string, tenantId: string) => createHmac('sha256', secret).update(tenantId, 'utf8').digest();

export function localToken(secret: string, tenantId: string): string {
  return `${PREFIX}${Buffer.from(tenantId, 'utf8').toString('base64url')}.${mac(secret, tenantId).toString('hex')}`;
}

/** The tenant a local token names, when `secret` made it; undefined for any other token. */
export function verifyLocalToken(secret: string, token: string): string | undefined {
  if (!token.startsWith(PREFIX)) return undefined;
  const [encodedTenant, presented] = token.slice(PREFIX.length).split('.');
  if (!encodedTenant || !presented || !/^[0-9a-f]{64}$/.test(presented)) return undefined;
  const tenant = tenantIdSchema.safeParse(Buffer.from(encodedTenant, 'base64url').toString('utf8'));
  if (!tenant.success) return undefined;
  return timingSafeEqual(mac(secret, tenant.data), Buffer.from(presented, 'hex')) ? tenant.data : undefined;
}
