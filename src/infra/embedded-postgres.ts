import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { EMBEDDED_APPLICATION_NAME } from '../store/database.ts';

export interface EmbeddedPostgres {
  /** A postgres:// URL any `pg` client can use. */
  url: string;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** A directory for the data files; omit for an in-memory database. */
  dataDir?: string;
  /** 0 picks a free port. */
  port?: number;
  maxConnections?: number;
}

/**
 * PostgreSQL 18 + pgvector compiled to WASM (PGlite), served over the wire protocol so that all
 * code talks `pg` exactly as it does to a native server. PGlite runs one transaction at a time
 * across every connection: callers keep transactions short.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions = {}): Promise<EmbeddedPostgres> {
  if (options.dataDir) await mkdir(options.dataDir, { recursive: true });
  const db = await PGlite.create({
    dataDir: options.dataDir ?? 'memory://',
    extensions: { vector },
  });
  await db.exec('CREATE EXTENSION IF NOT EXISTS vector');
  const server = new PGLiteSocketServer({
    db,
    host: '127.0.0.1',
    port: options.port ?? 0,
    maxConnections: options.maxConnections ?? 32,
  });
  await server.start();
  const address = server.getServerConn();
  return {
    // Marked, so that every pool over it keeps to one connection (createPool).
    url: `postgresql://postgres:postgres@${address}/postgres?sslmode=disable&application_name=${EMBEDDED_APPLICATION_NAME}`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
