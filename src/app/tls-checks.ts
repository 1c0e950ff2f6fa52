import { readFile } from 'node:fs/promises';
import { tlsHandshake, TlsHandshakeFailed, type TlsHandshake, type TlsHandshakeOptions } from '../infra/tls-handshake.ts';
import type { Config } from './config.ts';
import { temporalTlsEndpoint } from './temporal-environment.ts';

/** A TLS connection the configuration asks for: which server, and how it is verified. */
export interface TlsEndpoint extends Pick<TlsHandshakeOptions, 'host' | 'port' | 'serverName' | 'ca' | 'cert' | 'key'> {
  name: 'temporal' | 'postgres';
}

function temporalEndpoint(config: Config): TlsEndpoint | undefined {
  const endpoint = temporalTlsEndpoint(config.temporal);
  return endpoint && { name: 'temporal', ...endpoint };
}

/**
 * DATABASE_URL's TLS, when its sslmode asks for it (`require`, `verify-ca`, `verify-full`; `prefer`
 * and `allow` say TLS is optional, `disable` none), with its sslrootcert, sslcert and sslkey files.
 */
async function databaseEndpoint(config: Config): Promise<TlsEndpoint | undefined> {
  if (!config.databaseUrl) return undefined;
  const url = new URL(config.databaseUrl);
  const mode = url.searchParams.get('sslmode');
  if (!mode || !['require', 'verify-ca', 'verify-full'].includes(mode)) return undefined;
  const file = async (parameter: string) => {
    const path = url.searchParams.get(parameter);
    return path ? readFile(path) : undefined;
  };
  const [ca, cert, key] = await Promise.all([file('sslrootcert'), file('sslcert'), file('sslkey')]);
  return {
    name: 'postgres',
    host: decodeURIComponent(url.hostname) || 'localhost',
    port: Number(url.port || 5432),
    ...(ca ? { ca } : {}),
    ...(cert && key ? { cert, key } : {}),
  };
}

/** Where a refused handshake's cause is set. */
const SETTINGS: Record<TlsEndpoint['name'], string> = {
  temporal:
    "Temporal's TLS: TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_SERVER_NAME, TEMPORAL_TLS_CLIENT_CERT_PATH, or the profile's tls",
  postgres: "PostgreSQL's TLS: DATABASE_URL's sslmode, sslrootcert, sslcert and sslkey",
};

export interface TlsCheck {
  name: TlsEndpoint['name'];
  handshake: TlsHandshake;
}

/**
 * A handshake with every server the configuration reaches over TLS, verified the way the SDK and
 * the driver verify it: what `up --check-only` reports (the protocol, and who the server claims to
 * be), and a refused certificate said in TLS's own words before anything else connects. Throws
 * TlsHandshakeFailed (naming the setting to look at) for the first refused one.
 */
export async function checkTls(config: Config): Promise<TlsCheck[]> {
  const endpoints = [temporalEndpoint(config), await databaseEndpoint(config)].filter((endpoint) => endpoint !== undefined);
  const checks: TlsCheck[] = [];
  for (const { name, ...endpoint } of endpoints) {
    const handshake = await tlsHandshake({ ...endpoint, ...(name === 'postgres' ? { startTls: 'postgres' as const } : {}) }).catch(
      (error: unknown) => {
        if (!(error instanceof TlsHandshakeFailed)) throw error;
        throw new TlsHandshakeFailed(error.address, `${error.reason} (${SETTINGS[name]})`);
      },
    );
    checks.push({ name, handshake });
  }
  return checks;
}

/** One line of a handshake for people: `TLSv1.3 (TLS_AES_256_GCM_SHA384) with 127.0.0.1:7233; the server is CN=…`. */
export function describeHandshake({ handshake }: TlsCheck): string {
  const { certificate } = handshake;
  return (
    `${handshake.protocol} (${handshake.cipher}) with ${handshake.address} as ${handshake.serverName}; the server is ${certificate.subject}` +
    `${certificate.subjectAltName ? ` (${certificate.subjectAltName})` : ''}, issued by ${certificate.issuer}, valid to ${certificate.validTo}; ` +
    `client certificate ${handshake.clientCertificateSent ? 'sent' : 'not sent'}`
  );
}
