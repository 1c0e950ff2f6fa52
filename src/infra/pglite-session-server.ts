import { createServer, type Server, type Socket } from 'node:net';
import { SkillsmithError } from '../errors/skillsmith-error.ts';
import type { PGlite } from '@electric-sql/pglite';

/** How long a connection may wait for the backend before it is refused (SQLSTATE 53300). */
export const DEFAULT_BACKEND_WAIT_MS = 30_000;

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3 = 196608;
/** A Sync message: closes an extended-protocol sequence a vanished client left open. */
const SYNC = Buffer.from([0x53, 0, 0, 0, 4]);

export interface SessionServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  maxConnections: number;
  /** A connection waiting longer than this for the backend gets SQLSTATE 53300 and is closed. */
  maxWaitMs?: number;
}

export interface SessionServer {
  /** host:port */
  address: string;
  stop(): Promise<void>;
}

/** A FATAL ErrorResponse: pg rejects the pending query (or connect) with `code` and `message`, then the socket closes. */
function fatalError(code: string, message: string): Buffer {
  const fields = Buffer.concat(
    [
      ['S', 'FATAL'],
      ['V', 'FATAL'],
      ['C', code],
      ['M', message],
    ].map(([tag, value]) => Buffer.concat([Buffer.from(tag!, 'ascii'), Buffer.from(value!, 'utf8'), Buffer.from([0])])),
  );
  const body = Buffer.concat([fields, Buffer.from([0])]);
  const header = Buffer.alloc(5);
  header.write('E', 0, 'ascii');
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

/** The transaction status of the last ReadyForQuery in a backend answer, if it holds one. */
function lastReadyStatus(answer: Uint8Array): string | undefined {
  let status: string | undefined;
  const view = Buffer.from(answer.buffer, answer.byteOffset, answer.byteLength);
  for (let at = 0; at + 5 <= view.length; at += 1 + view.readInt32BE(at + 1)) {
    if (view[at] === 0x5a /* Z */ && at + 6 <= view.length) status = String.fromCharCode(view[at + 5]!);
  }
  return status;
}

interface Waiter {
  connection: GatedConnection;
  admit: () => void;
  timer: NodeJS.Timeout;
}

/**
 * The one backend, owned by one connection at a time. PGlite is a single Postgres session: the
 * unnamed statement and portal, the open transaction and any named statement belong to whoever
 * speaks to it. A connection takes the backend with its first message and keeps it until the
 * backend is idle again (ReadyForQuery 'I' after its Sync or Query) — or, once it has prepared a
 * named statement, until it closes — so no connection's Parse/Bind/Execute is ever interleaved
 * with another's, and no transaction is shared. Waiters are admitted first come, first served.
 */
class BackendGate {
  private owner: GatedConnection | undefined;
  private readonly waiters: Waiter[] = [];

  constructor(private readonly maxWaitMs: number) {}

  owns(connection: GatedConnection): boolean {
    return this.owner === connection;
  }

  acquire(connection: GatedConnection): Promise<void> {
    if (this.owner === connection) return Promise.resolve();
    if (!this.owner) {
      this.owner = connection;
      return Promise.resolve();
    }
    return new Promise((admit, refuse) => {
      const timer = setTimeout(() => {
        this.forget(connection);
        refuse(
          new BackendBusy(
            `the embedded database (PGlite) serves one connection at a time and another has held it for more than ${this.maxWaitMs / 1000} s ` +
              '(an open transaction?); for concurrent use set SKILLSMITH_EMBEDDED_DATABASE=native or DATABASE_URL',
          ),
        );
      }, this.maxWaitMs);
      this.waiters.push({ connection, admit, timer });
    });
  }

  release(connection: GatedConnection): void {
    if (this.owner !== connection) return;
    const next = this.waiters.shift();
    this.owner = next?.connection;
    if (next) {
      clearTimeout(next.timer);
      next.admit();
    }
  }

  /** A connection that closed while waiting leaves the queue. */
  forget(connection: GatedConnection): void {
    const index = this.waiters.findIndex((waiter) => waiter.connection === connection);
    if (index >= 0) clearTimeout(this.waiters.splice(index, 1)[0]!.timer);
  }
}

/** A connection waited past the bound for the single backend; the client gets SQLSTATE 53300. */
export class BackendBusy extends SkillsmithError {
  static override readonly code = 'BackendBusy';
}

class GatedConnection {
  private buffer = Buffer.alloc(0);
  private readonly messages: Buffer[] = [];
  private started = false;
  private pumping = false;
  private closed = false;
  /** A message was sent since the backend last said ReadyForQuery. */
  private midSequence = false;
  private idle = true;
  /** Prepared a named statement: keeps the backend until it closes. */
  private sticky = false;

  constructor(
    private readonly socket: Socket,
    private readonly db: PGlite,
    private readonly gate: BackendGate,
    private readonly onClosed: () => void,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', () => void this.close());
    socket.on('close', () => void this.close());
  }

  private receive(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      if (!this.started) {
        if (this.buffer.length < 8) break;
        const length = this.buffer.readInt32BE(0);
        if (this.buffer.length < length) break;
        const code = this.buffer.readInt32BE(4);
        const packet = this.buffer.subarray(0, length);
        this.buffer = this.buffer.subarray(length);
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          this.socket.write('N');
        } else if (code === CANCEL_REQUEST) {
          this.socket.destroy();
          return;
        } else if (code === PROTOCOL_3) {
          this.started = true;
          this.messages.push(Buffer.from(packet));
        } else {
          this.refuse('08P01', `unsupported startup code ${code}`);
          return;
        }
        continue;
      }
      if (this.buffer.length < 5) break;
      const length = 1 + this.buffer.readInt32BE(1);
      if (this.buffer.length < length) break;
      this.messages.push(Buffer.from(this.buffer.subarray(0, length)));
      this.buffer = this.buffer.subarray(length);
    }
    void this.pump();
  }

  /** Hands this connection's messages to the backend in order, holding the gate while it needs it. */
  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.messages.length > 0 && !this.closed) {
        if (!this.gate.owns(this)) {
          try {
            await this.gate.acquire(this);
          } catch (error) {
            if (error instanceof BackendBusy) this.refuse('53300', error.message);
            return;
          }
          if (this.closed) {
            this.gate.release(this);
            return;
          }
        }
        if (this.messages[0]![0] === 0x58 /* X: Terminate */) {
          // The socket's close event releases the backend (close() waits for this pump to end).
          this.messages.length = 0;
          this.socket.end();
          return;
        }
        const batch = this.takeSequence();
        this.midSequence = true;
        const answer = await exchange(this.db, batch);
        const status = lastReadyStatus(answer);
        if (status !== undefined) {
          this.midSequence = false;
          this.idle = status === 'I';
        }
        if (answer.length > 0 && this.socket.writable) this.socket.write(answer);
        if (!this.midSequence && this.idle && !this.sticky) this.gate.release(this);
      }
    } finally {
      this.pumping = false;
    }
  }

  /**
   * The queued messages up to and including the first that ends a sequence (Sync, Query), or all
   * of them (stopping before a Terminate): a client's Parse/Bind/Describe/Execute/Sync arrive
   * together, and the backend takes them in one call instead of five. A sequence never runs past
   * its end, so another connection waiting for the idle backend gets it as soon as before.
   */
  private takeSequence(): Buffer {
    const taken: Buffer[] = [];
    while (this.messages.length > 0 && this.messages[0]![0] !== 0x58 /* X: Terminate */) {
      const message = this.messages.shift()!;
      taken.push(message);
      const type = message[0];
      if (type === 0x50 /* P: Parse */ && message[5] !== 0) this.sticky = true;
      if (type === 0x53 /* S: Sync */ || type === 0x51 /* Q: Query */) break;
    }
    return taken.length === 1 ? taken[0]! : Buffer.concat(taken);
  }

  private refuse(code: string, message: string): void {
    if (this.socket.writable) this.socket.end(fatalError(code, message));
    else this.socket.destroy();
    void this.close();
  }

  /** Leaves the backend as a new connection expects it: no open sequence, no open transaction. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.messages.length = 0;
    this.gate.forget(this);
    // Wait for a message in flight, then close what the connection left open.
    while (this.pumping && this.gate.owns(this)) await new Promise((done) => setImmediate(done));
    if (this.gate.owns(this)) {
      try {
        if (this.midSequence) await exchange(this.db, SYNC);
        if (this.db.isInTransaction()) await exchange(this.db, simpleQuery('ROLLBACK'));
        if (this.sticky) await exchange(this.db, simpleQuery('DEALLOCATE ALL'));
      } finally {
        this.gate.release(this);
      }
    }
    this.onClosed();
  }
}

/**
 * Messages in, the backend's answer bytes out, untouched. Not execProtocolRaw: it also parses
 * every answer message in JS and keeps each one in a list nothing empties (PGlite's result
 * tracking for its own query API) — more CPU than Postgres itself spends on a statement, and
 * memory that grows with every row served. The raw stream hands the bytes over as they are made.
 * PGlite keeps the last stream callback for later raw calls: once served, the instance is spoken
 * to only through here (db.close() after the server stops ends it without reading its answer).
 */
async function exchange(db: PGlite, messages: Uint8Array): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  await db.runExclusive(() => db.execProtocolRawStream(messages, { onRawData: (chunk) => chunks.push(chunk.slice()) }));
  if (chunks.length === 1) return chunks[0]!;
  return Buffer.concat(chunks);
}

function simpleQuery(sql: string): Buffer {
  const text = Buffer.from(`${sql}\0`, 'utf8');
  const header = Buffer.alloc(5);
  header.write('Q', 0, 'ascii');
  header.writeInt32BE(text.length + 4, 1);
  return Buffer.concat([header, text]);
}

/**
 * PGlite over the PostgreSQL wire protocol, correct under concurrent connections: whole
 * transactions (and whole extended-protocol sequences) of one connection run before another's
 * first message is looked at (BackendGate). It replaces pglite-socket's server, which queues
 * single messages and so let one connection's Bind land on another's Parse.
 */
export async function startSessionServer(db: PGlite, options: SessionServerOptions): Promise<SessionServer> {
  const gate = new BackendGate(options.maxWaitMs ?? DEFAULT_BACKEND_WAIT_MS);
  const connections = new Set<GatedConnection>();
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    if (connections.size >= options.maxConnections) {
      socket.end(fatalError('53300', `the embedded database accepts at most ${options.maxConnections} connections`));
      return;
    }
    const connection = new GatedConnection(socket, db, gate, () => connections.delete(connection));
    connections.add(connection);
  });
  await new Promise<void>((listening, failed) => {
    server.once('error', failed);
    server.listen(options.port, options.host, () => listening());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  return {
    address: `${options.host}:${port}`,
    async stop() {
      const closed = new Promise<void>((done) => server.close(() => done()));
      for (const socket of sockets) socket.destroy();
      await Promise.all([...connections].map((connection) => connection.close()));
      await closed;
    },
  };
}
