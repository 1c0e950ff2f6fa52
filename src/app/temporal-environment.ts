import type { TLSConfig } from '@temporalio/client';
import { loadClientConfigProfile, toClientOptions } from '@temporalio/envconfig';
import { TemporalUnavailable } from '../client/temporal-unavailable.ts';
import { tlsHandshake, TlsHandshakeFailed, type TlsHandshakeOptions } from '../infra/tls-handshake.ts';
import { ConfigError } from './config-error.ts';

/**
 * How this process reaches a Temporal it did not start: Temporal's own environment
 * configuration (`@temporalio/envconfig`), which the Temporal CLI and every SDK share — a
 * profile of a `temporal.toml` (TEMPORAL_CONFIG_FILE, else the user's
 * `~/.config/temporalio/temporal.toml`; TEMPORAL_PROFILE, else `default`) with TEMPORAL_ADDRESS,
 * TEMPORAL_NAMESPACE, TEMPORAL_API_KEY and TEMPORAL_TLS_* over it. An API key turns TLS on, as
 * Temporal Cloud needs; a server CA, a client certificate and key (mTLS) and a server name are
 * TLS settings. The client, every worker and the stack check connect with the same settings.
 */
export interface TemporalAccess {
  apiKey?: string;
  /** `true`: TLS with the system's CAs; a TLSConfig: its CA, client certificate and server name; absent or `false`: plain. */
  tls?: TLSConfig | boolean;
  /** gRPC metadata of a profile's `grpc_meta`, sent with every request. */
  metadata?: Record<string, string>;
}

/** The Temporal variables of the environment (validated by the configuration's schema), and where a user's config file is. */
export type TemporalEnvironment = Partial<
  Record<
    | 'TEMPORAL_ADDRESS'
    | 'TEMPORAL_NAMESPACE'
    | 'TEMPORAL_PROFILE'
    | 'TEMPORAL_CONFIG_FILE'
    | 'TEMPORAL_API_KEY'
    | 'TEMPORAL_TLS'
    | 'TEMPORAL_TLS_SERVER_CA_CERT_PATH'
    | 'TEMPORAL_TLS_SERVER_CA_CERT_DATA'
    | 'TEMPORAL_TLS_CLIENT_CERT_PATH'
    | 'TEMPORAL_TLS_CLIENT_CERT_DATA'
    | 'TEMPORAL_TLS_CLIENT_KEY_PATH'
    | 'TEMPORAL_TLS_CLIENT_KEY_DATA'
    | 'TEMPORAL_TLS_SERVER_NAME'
    | 'HOME'
    | 'XDG_CONFIG_HOME'
    | 'APPDATA',
    string
  >
>;

export interface ResolvedTemporal {
  /** The frontend as host:port, from the environment or the profile; undefined: the stack's own dev server. */
  address: string | undefined;
  namespace: string | undefined;
  access: TemporalAccess;
}

/**
 * The profile and the environment merged the way envconfig merges them (the environment wins),
 * with every certificate file read now: a missing file stops start-up naming it, not the first
 * connection.
 */
export function resolveTemporal(environment: TemporalEnvironment): ResolvedTemporal {
  const overrideEnvVars = Object.fromEntries(
    Object.entries(environment).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  let profile: ReturnType<typeof loadClientConfigProfile>;
  try {
    profile = loadClientConfigProfile({
      ...(environment.TEMPORAL_PROFILE === undefined ? {} : { profile: environment.TEMPORAL_PROFILE }),
      ...(environment.TEMPORAL_CONFIG_FILE === undefined ? {} : { configSource: { path: environment.TEMPORAL_CONFIG_FILE } }),
      overrideEnvVars,
    });
  } catch (error) {
    const variable =
      environment.TEMPORAL_PROFILE !== undefined && /Profile '/.test((error as Error).message)
        ? 'TEMPORAL_PROFILE'
        : 'TEMPORAL_CONFIG_FILE';
    throw new ConfigError(variable, `Temporal's config file (temporal.toml) cannot be used: ${(error as Error).message}`);
  }
  let connect: ReturnType<typeof toClientOptions>;
  try {
    connect = toClientOptions(profile);
  } catch (error) {
    throw new ConfigError('TEMPORAL_TLS', `a TLS file of the Temporal connection cannot be read: ${(error as Error).message}`);
  }
  const { apiKey, tls, metadata } = connect.connectionOptions;
  return {
    address: profile.address,
    namespace: connect.namespace,
    access: {
      ...(typeof apiKey === 'string' ? { apiKey } : {}),
      ...(tls === undefined || tls === null ? {} : { tls }),
      ...(metadata ? { metadata: metadata as Record<string, string> } : {}),
    },
  };
}

/**
 * The connection options for `address`: the configured access for the configured Temporal, none
 * for another (the stack's own dev server, which serves plain gRPC on loopback).
 */
export function temporalConnectionOptions(
  temporal: { address: string | undefined; access: TemporalAccess },
  address: string,
): { address: string } & TemporalAccess {
  return address === temporal.address ? { address, ...temporal.access } : { address };
}

/** What a TLS failure says, in Node's words (grpc-js) and in the worker's (tonic, rustls). */
const TLS_FAILURE = /certificate|self[- ]signed|issuer|UNABLE_TO_VERIFY|CERT_|ssl|tls|handshake|alert/i;
/** gRPC's statuses for a call it answered, refusing who made it. */
const AUTHENTICATION_FAILURE = /UNAUTHENTICATED|PERMISSION_DENIED/;

/** The configured Temporal's TLS as a handshake needs it, when it has TLS (an API key, TEMPORAL_TLS*, a profile's `tls`). */
export function temporalTlsEndpoint(temporal: { address: string | undefined; access: TemporalAccess }): TlsHandshakeOptions | undefined {
  const { address, access } = temporal;
  if (!address || !access.tls) return undefined;
  const separator = address.lastIndexOf(':');
  const tls = access.tls === true ? {} : access.tls;
  return {
    host: address.slice(0, separator),
    port: Number(address.slice(separator + 1)),
    ...(tls.serverNameOverride ? { serverName: tls.serverNameOverride } : {}),
    ...(tls.serverRootCACertificate ? { ca: tls.serverRootCACertificate } : {}),
    ...(tls.clientCertPair ? { cert: tls.clientCertPair.crt, key: tls.clientCertPair.key } : {}),
  };
}

/**
 * A connection to Temporal that failed, as the error callers branch on, saying why: the SDK's own
 * message and its causes (an UNAUTHENTICATED answer to a missing API key), and where TLS is
 * configured and the SDK only says it could not connect in time, the certificate problem a
 * handshake of our own finds (a refused CA, a wrong server name).
 */
export async function temporalConnectFailure(
  temporal: { address: string | undefined; access: TemporalAccess },
  address: string,
  error: unknown,
): Promise<TemporalUnavailable> {
  const messages: string[] = [];
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 4; current = current.cause, depth += 1) {
    if (!messages.some((message) => message.includes(current.message))) messages.push(current.message);
  }
  let message = messages.join(': ') || String(error);
  const endpoint = address === temporal.address ? temporalTlsEndpoint(temporal) : undefined;
  if (endpoint && !TLS_FAILURE.test(message)) {
    const refused = await tlsHandshake({ ...endpoint, timeoutMs: 5_000 }).then(
      () => undefined,
      (handshake: unknown) => (handshake instanceof TlsHandshakeFailed ? handshake.reason : undefined),
    );
    if (refused) message = `${refused} (${message})`;
  }
  const said = TLS_FAILURE.test(message)
    ? `the TLS connection to Temporal at ${address} failed: ${message}`
    : AUTHENTICATION_FAILURE.test(message)
      ? `Temporal at ${address} refused this client's credentials (TEMPORAL_API_KEY, the client certificate): ${message}`
      : `Temporal at ${address} does not answer: ${message}`;
  return new TemporalUnavailable(said, { cause: error });
}
