import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls, type PeerCertificate, type TLSSocket } from 'node:tls';
import { SkillsmithError } from '../errors/skillsmith-error.ts';

/** What a TLS server said about itself in a handshake that succeeded. */
export interface TlsHandshake {
  /** host:port reached. */
  address: string;
  /** The name asked for (SNI) and verified against the certificate. */
  serverName: string;
  protocol: string;
  cipher: string;
  /** Who the server claims to be: its certificate's subject, alternative names and issuer. */
  certificate: { subject: string; subjectAltName: string; issuer: string; validTo: string; fingerprint256: string };
  clientCertificateSent: boolean;
}

/** The handshake failed: the message names the certificate problem in Node's words and code. */
export class TlsHandshakeFailed extends SkillsmithError {
  static override readonly code = 'TlsHandshakeFailed';
  constructor(
    readonly address: string,
    readonly reason: string,
  ) {
    super(`the TLS handshake with ${address} failed: ${reason}`);
  }
}

export interface TlsHandshakeOptions {
  host: string;
  port: number;
  /** The name to ask for and verify; default the host. */
  serverName?: string;
  /** PEM CAs to trust instead of the system's. */
  ca?: string | Uint8Array;
  cert?: string | Uint8Array;
  key?: string | Uint8Array;
  /** `postgres`: the PostgreSQL protocol's SSLRequest first (TLS starts inside the connection). */
  startTls?: 'postgres';
  timeoutMs?: number;
}

const pem = (value: string | Uint8Array) => (typeof value === 'string' ? value : Buffer.from(value));

const distinguishedName = (name: PeerCertificate['subject'] | undefined) =>
  name
    ? Object.entries(name)
        .map(([key, value]) => `${key}=${Array.isArray(value) ? value.join('+') : value}`)
        .join(', ')
    : '';

/** PostgreSQL's SSLRequest: length 8, code 80877103; the server answers one byte, `S` to go on in TLS. */
function postgresSslRequest(socket: Socket): Promise<void> {
  return new Promise((done, failed) => {
    socket.once('error', failed);
    socket.once('data', (answer: Buffer) => {
      socket.off('error', failed);
      if (answer[0] === 0x53) done();
      else failed(new Error('the server does not accept TLS connections (it answered the SSLRequest with N): turn ssl on'));
    });
    const request = Buffer.alloc(8);
    request.writeInt32BE(8, 0);
    request.writeInt32BE(80877103, 4);
    socket.write(request);
  });
}

/**
 * A TLS handshake of our own with a server, verified as its clients verify it, so a check can say
 * what the server presented (the SDK and the database driver keep it to themselves) and why a
 * refused one was refused: `UNABLE_TO_VERIFY_LEAF_SIGNATURE`, `SELF_SIGNED_CERT_IN_CHAIN`,
 * `ERR_TLS_CERT_ALTNAME_INVALID`, `CERT_HAS_EXPIRED`…
 */
export async function tlsHandshake(options: TlsHandshakeOptions): Promise<TlsHandshake> {
  const address = `${options.host}:${options.port}`;
  const serverName = options.serverName ?? options.host;
  const timeoutMs = options.timeoutMs ?? 10_000;
  let raw: Socket | undefined;
  let secure: TLSSocket | undefined;
  const timer = setTimeout(() => (secure ?? raw)?.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
  try {
    if (options.startTls === 'postgres') {
      raw = connectTcp({ host: options.host, port: options.port });
      await new Promise<void>((done, failed) => raw!.once('connect', done).once('error', failed));
      await postgresSslRequest(raw);
    }
    const socket = connectTls({
      ...(raw ? { socket: raw } : { host: options.host, port: options.port }),
      // SNI takes host names only; Node verifies the certificate for the server name, else the host (an IP against its IP SANs).
      ...(/^[\d.]+$|:/.test(serverName) ? {} : { servername: serverName }),
      ...(options.ca ? { ca: pem(options.ca) } : {}),
      ...(options.cert && options.key ? { cert: pem(options.cert), key: pem(options.key) } : {}),
      ALPNProtocols: options.startTls ? [] : ['h2'],
      rejectUnauthorized: true,
    });
    secure = socket;
    await new Promise<void>((done, failed) => socket.once('secureConnect', done).once('error', failed));
    const peer = socket.getPeerCertificate();
    return {
      address,
      serverName,
      protocol: socket.getProtocol() ?? 'unknown',
      cipher: socket.getCipher().name,
      certificate: {
        subject: distinguishedName(peer.subject),
        subjectAltName: peer.subjectaltname ?? '',
        issuer: distinguishedName(peer.issuer),
        validTo: peer.valid_to,
        fingerprint256: peer.fingerprint256,
      },
      clientCertificateSent: Boolean(options.cert && options.key),
    };
  } catch (error) {
    const { code, message } = error as { code?: string; message: string };
    throw new TlsHandshakeFailed(address, code && !message.includes(code) ? `${code}: ${message}` : message);
  } finally {
    clearTimeout(timer);
    secure?.destroy();
    raw?.destroy();
  }
}
