import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** PEM files of one certificate and its key, and their text. */
export interface CertificateFiles {
  certPath: string;
  keyPath: string;
  cert: string;
  key: string;
}

export interface TestCertificates {
  directory: string;
  /** The CA that signed the server and client certificates. */
  ca: { certPath: string; cert: string };
  /** Another CA, that signed nothing here: a client trusting it must refuse the server. */
  otherCa: { certPath: string; cert: string };
  /** For localhost, 127.0.0.1 and `serverName`. */
  server: CertificateFiles;
  /** A client certificate (mTLS), CN skillsmith-worker. */
  client: CertificateFiles;
  serverName: string;
  remove(): Promise<void>;
}

/**
 * A private CA and the certificates it signs, made with openssl (P-256 keys: quick to make, and
 * what rustls, Node's TLS and PostgreSQL all take), valid for two days.
 */
export async function createTestCertificates(serverName = 'temporal.skillsmith.test'): Promise<TestCertificates> {
  const directory = await mkdtemp(join(tmpdir(), 'skillsmith-certificates-'));
  const path = (name: string) => join(directory, name);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  const makeCa = async (name: string, subject: string) => {
    await run('openssl', [
      'req',
      '-x509',
      ...ec,
      '-keyout',
      path(`${name}.key`),
      '-out',
      path(`${name}.crt`),
      '-days',
      '2',
      '-subj',
      subject,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ]);
  };
  const makeLeaf = async (name: string, subject: string, extensions: string) => {
    await run('openssl', ['req', ...ec, '-keyout', path(`${name}.key`), '-out', path(`${name}.csr`), '-subj', subject]);
    await writeFile(path(`${name}.ext`), extensions);
    await run('openssl', [
      'x509',
      '-req',
      '-in',
      path(`${name}.csr`),
      '-CA',
      path('ca.crt'),
      '-CAkey',
      path('ca.key'),
      '-CAcreateserial',
      '-out',
      path(`${name}.crt`),
      '-days',
      '2',
      '-extfile',
      path(`${name}.ext`),
    ]);
  };
  await Promise.all([makeCa('ca', '/CN=skillsmith test CA'), makeCa('other-ca', '/CN=some other CA')]);
  await makeLeaf(
    'server',
    `/CN=${serverName}`,
    `subjectAltName=DNS:${serverName},DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature\n`,
  );
  await makeLeaf('client', '/CN=skillsmith-worker', 'extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature\n');
  const files = async (name: string): Promise<CertificateFiles> => ({
    certPath: path(`${name}.crt`),
    keyPath: path(`${name}.key`),
    cert: await readFile(path(`${name}.crt`), 'utf8'),
    key: await readFile(path(`${name}.key`), 'utf8'),
  });
  const [ca, otherCa, server, client] = await Promise.all([files('ca'), files('other-ca'), files('server'), files('client')]);
  return {
    directory,
    ca: { certPath: ca.certPath, cert: ca.cert },
    otherCa: { certPath: otherCa.certPath, cert: otherCa.cert },
    server,
    client,
    serverName,
    remove: () => rm(directory, { recursive: true, force: true }),
  };
}
