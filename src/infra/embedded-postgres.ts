import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { EMBEDDED_APPLICATION_NAME } from '../store/database.ts';
import { startSessionServer } from './pglite-session-server.ts';

export interface EmbeddedPostgres {
  /** A postgres:// URL any `pg` client can use. */
  url: string;
  /** The data directory as a tarball, which `loadDataDir` starts a new instance from. */
  dump(): Promise<Blob>;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** A directory for the data files; omit for an in-memory database. */
  dataDir?: string;
  /** 0 picks a free port. */
  port?: number;
  maxConnections?: number;
  /** How long a connection may wait for the single backend before SQLSTATE 53300 (default 30 s). */
  maxWaitMs?: number;
  /**
   * A data directory from `dump()` to start from instead of a new cluster: initdb is most of an
   * in-memory start (the tests start each file's database from one migrated dump).
   */
  loadDataDir?: Blob;
  /**
   * Postgres's shared_buffers, e.g. '16MB'; unset, PGlite's 128 MB. Setting up that much buffer
   * space is about a fifth of an in-memory start's CPU (1.01 → 0.83 s, median of 7), more than a
   * small database ever fills: the tests' per-file databases use a smaller one.
   */
  sharedBuffers?: string;
  /**
   * The WAL segment size of a new cluster, in MB (initdb's --wal-segsize; unset, 16). A dump holds
   * its preallocated segments: the tests' template at 1 MB carries 7 MB of WAL instead of 16 MB,
   * which every file's start would copy in again. Ignored when starting from `loadDataDir` or an
   * existing `dataDir`.
   */
  walSegmentSizeMb?: number;
}

/**
 * PostgreSQL 18 + pgvector compiled to WASM (PGlite), served over the wire protocol so that all
 * code talks `pg` exactly as it does to a native server. PGlite is one backend: connections take
 * turns, a whole transaction at a time (pglite-session-server.ts), so callers keep transactions
 * short. The stack's default is a native server (native-postgres.ts); this is its fallback and
 * the tests' fast per-file database.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions = {}): Promise<EmbeddedPostgres> {
  if (options.dataDir) await mkdir(options.dataDir, { recursive: true });
  const db = await PGlite.create({
    dataDir: options.dataDir ?? 'memory://',
    extensions: { vector },
    ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
    ...(options.walSegmentSizeMb ? { initDbStartParams: [`--wal-segsize=${options.walSegmentSizeMb}`] } : {}),
    ...(options.sharedBuffers ? { startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${options.sharedBuffers}`] } : {}),
  });
  await db.exec('CREATE EXTENSION IF NOT EXISTS vector');
  const server = await startSessionServer(db, {
    host: '127.0.0.1',
    port: options.port ?? 0,
    maxConnections: options.maxConnections ?? 64,
    ...(options.maxWaitMs === undefined ? {} : { maxWaitMs: options.maxWaitMs }),
  });
  return {
    // Marked, so that every pool over it keeps to one connection (createPool).
    url: `postgresql://postgres:postgres@${server.address}/postgres?sslmode=disable&application_name=${EMBEDDED_APPLICATION_NAME}`,
    dump: () => db.dumpDataDir('none'),
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
