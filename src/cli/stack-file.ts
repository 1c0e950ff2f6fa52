import { readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { z } from 'zod';

/** Where `skillsmith up` says it listens; other commands on the same machine read it. */
export const stackFileSchema = z.object({
  pid: z.number().int(),
  startedAt: z.string(),
  temporalAddress: z.string(),
  temporalUiUrl: z.string().nullable(),
  namespace: z.string(),
  taskQueue: z.string(),
  databaseUrl: z.string(),
  embeddedDatabase: z.boolean(),
  /** Which database the stack runs: its own native PostgreSQL, its own PGlite, or DATABASE_URL's. */
  database: z.enum(['native', 'pglite', 'external']).optional(),
  apiUrl: z.string().optional(),
});

export type StackFile = z.infer<typeof stackFileSchema>;

export const stackFilePath = (home: string) => resolve(home, 'stack.json');

export async function writeStackFile(home: string, stack: StackFile): Promise<void> {
  await mkdir(home, { recursive: true });
  // Owner-only: it holds the database URL with its password.
  await writeFile(stackFilePath(home), `${JSON.stringify(stack, null, 2)}\n`, { mode: 0o600 });
}

export async function removeStackFile(home: string): Promise<void> {
  await rm(stackFilePath(home), { force: true });
}

/**
 * The running stack's local secret (src/api/local-token.ts), beside the stack file and, like it,
 * owner-only; gone with the stack.
 */
export const localSecretPath = (home: string) => resolve(home, 'stack.secret');

export async function writeLocalSecret(home: string, secret: string): Promise<void> {
  await mkdir(home, { recursive: true });
  await writeFile(localSecretPath(home), `${secret}\n`, { mode: 0o600 });
}

export async function readLocalSecret(home: string): Promise<string | undefined> {
  return readFile(localSecretPath(home), 'utf8').then(
    (text) => text.trim() || undefined,
    () => undefined,
  );
}

export async function removeLocalSecret(home: string): Promise<void> {
  await rm(localSecretPath(home), { force: true });
}

/** The running stack, or undefined when none was started here (or its process is gone). */
export async function readStackFile(home: string): Promise<StackFile | undefined> {
  let text: string;
  try {
    text = await readFile(stackFilePath(home), 'utf8');
  } catch {
    return undefined;
  }
  const parsed = stackFileSchema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error(`${stackFilePath(home)} is not a skillsmith stack file: ${parsed.error.issues[0]?.message}`);
  try {
    process.kill(parsed.data.pid, 0);
  } catch {
    return undefined;
  }
  return parsed.data;
}
