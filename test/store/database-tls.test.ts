import { execFile } from 'node:child_process';
import { access, chmod, chown, copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/app/config.ts';
import { checkTls } from '../../src/app/tls-checks.ts';
import { freePort } from '../../src/infra/temporal-dev-server.ts';
import { createPool } from '../../src/store/database.ts';
import { runSkillsmith } from '../support/cli.ts';
import { createTestCertificates, type TestCertificates } from '../support/test-certificates.ts';

const run = promisify(execFile);
/** Debian's PostgreSQL (built with OpenSSL; the stack's pinned wheel is built without it). .ci/run installs it where it is missing. */
const DEBIAN_POSTGRES = '/usr/lib/postgresql';
/** PostgreSQL refuses to run as root: Debian's package makes this user. */
const SERVER_USER = 'postgres';

/**
 * PostgreSQL over TLS, for real: a server with `ssl = on` and a certificate of a CA this test
 * makes, reached through DATABASE_URL's own parameters (`sslmode=verify-full`, `sslrootcert`) by
 * the pool every process builds, by the TLS check of `up` and by the CLI. (Debian's PostgreSQL has
 * no pgvector, so nothing here migrates: the pool and the driver's TLS are what is under test.)
 */
describe('PostgreSQL through DATABASE_URL with sslmode and sslrootcert', () => {
  let certificates: TestCertificates;
  let directory: string;
  let bin: string;
  let port: number;
  let serverUser: { uid: number; gid: number } | undefined;
  const url = (parameters: string) => `postgresql://skillsmith@127.0.0.1:${port}/postgres?${parameters}`;
  const asServer = (tool: string, args: string[]) =>
    run(join(bin, tool), args, { cwd: directory, env: { PATH: process.env.PATH, LC_ALL: 'C' }, ...(serverUser ?? {}) });

  beforeAll(async () => {
    const versions = await readdir(DEBIAN_POSTGRES).catch(() => []);
    if (versions.length === 0) throw new Error(`no PostgreSQL under ${DEBIAN_POSTGRES}: apt-get install postgresql (.ci/run does)`);
    bin = join(DEBIAN_POSTGRES, versions.sort().at(-1)!, 'bin');
    await access(join(bin, 'postgres'));
    [certificates, port, directory] = await Promise.all([
      createTestCertificates(),
      freePort(),
      mkdtemp(join(tmpdir(), 'skillsmith-tls-postgres-')),
    ]);
    await chmod(directory, 0o700);
    if (process.getuid?.() === 0) {
      const [{ stdout: uid }, { stdout: gid }] = await Promise.all([run('id', ['-u', SERVER_USER]), run('id', ['-g', SERVER_USER])]);
      serverUser = { uid: Number(uid), gid: Number(gid) };
      await chown(directory, serverUser.uid, serverUser.gid);
    }
    // The server reads its certificate and key as its own user, the key readable by it alone.
    for (const [from, to] of [
      [certificates.server.certPath, 'server.crt'],
      [certificates.server.keyPath, 'server.key'],
    ] as const) {
      await copyFile(from, join(directory, to));
      await chmod(join(directory, to), 0o600);
      if (serverUser) await chown(join(directory, to), serverUser.uid, serverUser.gid);
    }
    await asServer('initdb', ['-D', join(directory, 'data'), '-U', 'skillsmith', '--auth=trust', '--no-instructions', '--encoding=UTF8']);
    const options = [
      `-p ${port}`,
      '-c listen_addresses=127.0.0.1',
      "-k ''",
      '-c ssl=on',
      `-c ssl_cert_file=${join(directory, 'server.crt')}`,
      `-c ssl_key_file=${join(directory, 'server.key')}`,
    ].join(' ');
    await asServer('pg_ctl', [
      'start',
      '-D',
      join(directory, 'data'),
      '-l',
      join(directory, 'server.log'),
      '-w',
      '-t',
      '60',
      '-o',
      options,
    ]);
  }, 120_000);

  afterAll(async () => {
    if (directory) {
      await asServer('pg_ctl', ['stop', '-D', join(directory, 'data'), '-m', 'immediate', '-w']).catch(() => undefined);
      await rm(directory, { recursive: true, force: true });
    }
    await certificates?.remove();
  });

  it('the pool connects over TLS, verifying the server and its name against sslrootcert', async () => {
    const pool = createPool(url(`sslmode=verify-full&sslrootcert=${certificates.ca.certPath}`));
    try {
      const { rows } = await pool.query<{ ssl: boolean; version: string }>(
        'SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()',
      );
      expect(rows[0]).toMatchObject({ ssl: true, version: expect.stringMatching(/^TLSv1\.[23]$/) });
    } finally {
      await pool.end();
    }
  });

  it("up's TLS check says what the server presented; a wrong CA fails naming the certificate problem, in the check and the CLI", async () => {
    const [check] = await checkTls(loadConfig({ DATABASE_URL: url(`sslmode=verify-full&sslrootcert=${certificates.ca.certPath}`) }));
    expect(check).toMatchObject({
      name: 'postgres',
      handshake: {
        certificate: { subject: `CN=${certificates.serverName}`, issuer: 'CN=skillsmith test CA' },
        clientCertificateSent: false,
      },
    });

    const wrong = url(`sslmode=verify-full&sslrootcert=${certificates.otherCa.certPath}`);
    await expect(checkTls(loadConfig({ DATABASE_URL: wrong }))).rejects.toThrow(
      /^the TLS handshake with 127\.0\.0\.1:\d+ failed: UNABLE_TO_VERIFY_LEAF_SIGNATURE: unable to verify the first certificate \(PostgreSQL's TLS: DATABASE_URL's sslmode, sslrootcert/,
    );
    const cli = await runSkillsmith(['migrate', '--json'], { DATABASE_URL: wrong });
    expect(cli.code).toBe(1);
    expect(JSON.parse(cli.stdout).error).toMatchObject({
      code: 'DatabaseUnavailable',
      message: expect.stringMatching(
        /^the TLS connection to the database failed: unable to verify the first certificate \(UNABLE_TO_VERIFY_LEAF_SIGNATURE\): check DATABASE_URL's sslmode, sslrootcert/,
      ),
    });
  });
});
