import http2, { type ClientHttp2Session, type IncomingHttpHeaders, type OutgoingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';

export interface TlsProxy {
  /** host:port of the proxy's TLS listener (127.0.0.1). */
  address: string;
  /** The calls it forwarded, each with the client certificate's CN and whether the API key came with it. */
  calls: Array<{ path: string; clientCertificate: string | undefined; apiKey: boolean }>;
  /** Calls refused for want of the API key (answered UNAUTHENTICATED). */
  refused: number;
  close(): Promise<void>;
}

/** gRPC status UNAUTHENTICATED. */
const UNAUTHENTICATED = 16;
const HOP_HEADERS = new Set([':method', ':path', ':scheme', ':authority', ':status']);

/**
 * A TLS-terminating gRPC proxy in front of a plain (h2c) Temporal frontend, as a load balancer or
 * Temporal Cloud's edge would be: it serves TLS with `cert`/`key`, demands a client certificate
 * signed by `clientCa` when given (mTLS), answers UNAUTHENTICATED to a call without
 * `authorization: Bearer <apiKey>` when `apiKey` is given, and forwards every other call, stream by
 * stream, headers, body and trailers, to `upstream`. Node's own http2 and TLS: nothing of Temporal's.
 */
export async function startTlsProxy(options: {
  upstream: string;
  cert: string;
  key: string;
  clientCa?: string;
  apiKey?: string;
}): Promise<TlsProxy> {
  let backend: ClientHttp2Session | undefined;
  const upstreamSession = () => {
    if (!backend || backend.closed || backend.destroyed) {
      backend = http2.connect(`http://${options.upstream}`);
      backend.on('error', () => undefined);
    }
    return backend;
  };
  const calls: TlsProxy['calls'] = [];
  const proxy: TlsProxy = { address: '', calls, refused: 0, close: async () => undefined };
  const server = http2.createSecureServer({
    cert: options.cert,
    key: options.key,
    allowHTTP1: false,
    ...(options.clientCa ? { ca: options.clientCa, requestCert: true, rejectUnauthorized: true } : {}),
  });
  server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    const socket = stream.session?.socket as TLSSocket | undefined;
    const clientCertificate = socket?.getPeerCertificate?.()?.subject?.CN as string | undefined;
    const apiKey = options.apiKey !== undefined && headers.authorization === `Bearer ${options.apiKey}`;
    if (options.apiKey !== undefined && !apiKey) {
      proxy.refused += 1;
      stream.respond(
        { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': UNAUTHENTICATED, 'grpc-message': 'no API key' },
        { endStream: true },
      );
      return;
    }
    calls.push({ path: String(headers[':path']), clientCertificate, apiKey });
    const forwarded: OutgoingHttpHeaders = { ':method': headers[':method'], ':path': headers[':path'] };
    for (const [name, value] of Object.entries(headers)) if (!HOP_HEADERS.has(name)) forwarded[name] = value;
    const upstream = upstreamSession().request(forwarded);
    let trailers: OutgoingHttpHeaders = {};
    upstream.on('response', (response) => {
      const { ':status': status, ...rest } = response;
      // A trailers-only answer (a gRPC error): the status is in these headers, and nothing follows.
      if ('grpc-status' in rest) stream.respond({ ':status': status, ...rest }, { endStream: true });
      else stream.respond({ ':status': status, ...rest }, { waitForTrailers: true });
    });
    upstream.on('trailers', (received) => (trailers = received));
    stream.on('wantTrailers', () => stream.sendTrailers(trailers));
    upstream.on('data', (chunk: Buffer) => {
      if (!stream.destroyed && !stream.writableEnded && stream.headersSent) stream.write(chunk);
    });
    upstream.on('end', () => {
      if (!stream.destroyed && !stream.writableEnded) stream.end();
    });
    upstream.on('error', () => stream.destroyed || stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR));
    stream.on('data', (chunk: Buffer) => upstream.write(chunk));
    stream.on('end', () => upstream.end());
    stream.on('close', () => upstream.destroyed || upstream.close(http2.constants.NGHTTP2_CANCEL));
    stream.on('error', () => undefined);
  });
  // A client refused at the handshake (no or a foreign client certificate) ends there; the server goes on.
  server.on('tlsClientError', () => undefined);
  server.on('sessionError', () => undefined);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  proxy.address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  proxy.close = async () => {
    for (const session of sessions) session.destroy();
    backend?.destroy();
    await new Promise<void>((done) => server.close(() => done()));
  };
  return proxy;
}
