import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig, type Config } from '../../src/app/config.ts';
import { createServices } from '../../src/app/services.ts';
import { createLazyTemporalClient } from '../../src/app/temporal-client.ts';
import { temporalConnectionOptions } from '../../src/app/temporal-environment.ts';
import { checkTls } from '../../src/app/tls-checks.ts';
import { createLogger } from '../../src/logging/logger.ts';
import { createWorker } from '../../workers/worker.ts';
import { runSkillsmith } from '../support/cli.ts';
import { openTestDatabase, type TestDatabase } from '../support/database.ts';
import { createTestCertificates, type TestCertificates } from '../support/test-certificates.ts';
import { testModelDir } from '../support/test-model.ts';
import { startTlsProxy, type TlsProxy } from '../support/tls-proxy.ts';

const API_KEY = 'test-api-key-0123456789';

/**
 * A secured Temporal, for real: the dev server behind a TLS-terminating proxy this test starts
 * (Node's http2 over TLS, a CA of its own, a client certificate demanded, the API key checked on
 * every call), reached through Temporal's environment configuration by the client, a worker and
 * `up --check-only` alike.
 */
describe('Temporal through its environment configuration: TLS, mTLS, an API key, profiles', () => {
  let certificates: TestCertificates;
  let proxy: TlsProxy;
  let database: TestDatabase;
  let scratch: string;
  let tlsEnvironment: Record<string, string>;

  beforeAll(async () => {
    certificates = await createTestCertificates();
    proxy = await startTlsProxy({
      upstream: inject('temporalAddress'),
      cert: certificates.server.cert,
      key: certificates.server.key,
      clientCa: certificates.ca.cert,
      apiKey: API_KEY,
    });
    database = await openTestDatabase();
    scratch = await mkdtemp(join(tmpdir(), 'skillsmith-temporal-tls-'));
    tlsEnvironment = {
      TEMPORAL_ADDRESS: proxy.address,
      TEMPORAL_API_KEY: API_KEY,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: certificates.ca.certPath,
      TEMPORAL_TLS_CLIENT_CERT_PATH: certificates.client.certPath,
      TEMPORAL_TLS_CLIENT_KEY_PATH: certificates.client.keyPath,
      TEMPORAL_TLS_SERVER_NAME: certificates.serverName,
    };
  });

  afterAll(async () => {
    await proxy?.close();
    await database?.close();
    await certificates?.remove();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  /** The stack check, round trip: the client starts it, a worker over `config` runs its workflow and activity. */
  async function roundTrip(config: Config) {
    const address = config.temporal.address!;
    const { worker, connection } = await createWorker({
      address,
      access: temporalConnectionOptions(config.temporal, address),
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      workflowBundlePath: inject('workflowBundlePath'),
      dependencies: createServices(config, database.pool, { logger: createLogger('silent') }),
    });
    const client = await createLazyTemporalClient(config, undefined)();
    try {
      return await worker.runUntil(
        client.workflow.execute('stackCheck', {
          taskQueue: config.temporal.taskQueue,
          workflowId: `stack-check/${config.temporal.taskQueue}`,
          workflowExecutionTimeout: '1 minute',
        }),
      );
    } finally {
      await client.connection.close();
      await connection.close();
    }
  }

  it('the client and a worker reach it with the CA, a client certificate, the server name and the API key', async () => {
    const config = loadConfig({ ...tlsEnvironment, TEMPORAL_TASK_QUEUE: `tls-env-${Date.now()}` });
    expect(config.temporal.address).toBe(proxy.address);
    const before = proxy.calls.length;
    expect((await roundTrip(config)).migrations).toBeGreaterThan(0);
    const calls = proxy.calls.slice(before);
    const methods = new Set(calls.map((call) => call.path.split('/').at(-1)));
    // The client's calls and the worker's long polls both came through the proxy.
    expect([...methods]).toEqual(expect.arrayContaining(['StartWorkflowExecution', 'PollWorkflowTaskQueue', 'PollActivityTaskQueue']));
    expect(calls.every((call) => call.apiKey && call.clientCertificate === 'skillsmith-worker')).toBe(true);
  });

  it("reads the same from a profile of Temporal's config file (TEMPORAL_CONFIG_FILE, TEMPORAL_PROFILE)", async () => {
    const file = join(scratch, 'temporal.toml');
    await writeFile(
      file,
      [
        '[profile.default]',
        'address = "127.0.0.1:1"',
        '',
        '[profile.secured]',
        `address = "${proxy.address}"`,
        'namespace = "default"',
        `api_key = "${API_KEY}"`,
        '',
        '[profile.secured.tls]',
        `server_ca_cert_path = "${certificates.ca.certPath}"`,
        `client_cert_path = "${certificates.client.certPath}"`,
        `client_key_path = "${certificates.client.keyPath}"`,
        `server_name = "${certificates.serverName}"`,
        '',
      ].join('\n'),
    );
    const config = loadConfig({
      TEMPORAL_CONFIG_FILE: file,
      TEMPORAL_PROFILE: 'secured',
      TEMPORAL_TASK_QUEUE: `tls-profile-${Date.now()}`,
    });
    expect(config.temporal).toMatchObject({ address: proxy.address, namespace: 'default', access: { apiKey: API_KEY } });
    expect((await roundTrip(config)).migrations).toBeGreaterThan(0);
    expect(loadConfig({ TEMPORAL_CONFIG_FILE: file }).temporal.address).toBe('127.0.0.1:1');
    expect(() => loadConfig({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'nope' })).toThrow(/TEMPORAL_PROFILE|Profile 'nope' not found/);
  });

  it('a wrong CA is refused by the handshake check, the client and the worker, each naming the certificate problem', async () => {
    const config = loadConfig({ ...tlsEnvironment, TEMPORAL_TLS_SERVER_CA_CERT_PATH: certificates.otherCa.certPath });
    await expect(checkTls(config)).rejects.toThrow(
      /^the TLS handshake with 127\.0\.0\.1:\d+ failed: (SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY): .*certificate.* \(Temporal's TLS: TEMPORAL_TLS_SERVER_CA_CERT_PATH/,
    );
    await expect(createLazyTemporalClient(config, undefined)()).rejects.toThrow(
      /^the TLS connection to Temporal at 127\.0\.0\.1:\d+ failed: .*(certificate|self[- ]signed)/i,
    );
    await expect(
      createWorker({
        address: proxy.address,
        access: temporalConnectionOptions(config.temporal, proxy.address),
        namespace: 'default',
        taskQueue: 'never-polled',
        workflowBundlePath: inject('workflowBundlePath'),
        dependencies: createServices(config, database.pool, { logger: createLogger('silent') }),
      }),
    ).rejects.toThrow(/^the TLS connection to Temporal at 127\.0\.0\.1:\d+ failed: .*(certificate|UnknownIssuer)/i);
  });

  it('without the API key every call is refused UNAUTHENTICATED', async () => {
    const { TEMPORAL_API_KEY: _key, ...withoutKey } = tlsEnvironment;
    const config = loadConfig(withoutKey);
    const refusedBefore = proxy.refused;
    // The SDK's connect asks for the server's system info: that first call is refused, and the error says so.
    await expect(createLazyTemporalClient(config, undefined)()).rejects.toThrow(
      /^Temporal at 127\.0\.0\.1:\d+ refused this client's credentials \(TEMPORAL_API_KEY, the client certificate\): .*UNAUTHENTICATED: no API key/,
    );
    expect(proxy.refused).toBeGreaterThan(refusedBefore);
  });

  it('up --check-only reports the TLS handshake and who the server claims to be', async () => {
    const result = await runSkillsmith(['up', '--check-only', '--json'], {
      ...tlsEnvironment,
      TEMPORAL_TASK_QUEUE: `tls-up-${Date.now()}`,
      DATABASE_URL: database.url,
      SKILLSMITH_HOME: join(scratch, 'home'),
      SKILLSMITH_API_PORT: '0',
      SKILLSMITH_MODEL_DIR: testModelDir,
      SKILLSMITH_EMBEDDING_MODEL: 'sentence-transformers/all-MiniLM-L6-v2',
    });
    expect(result.code, result.stderr).toBe(0);
    const stack = JSON.parse(result.stdout);
    expect(stack.temporalAddress).toBe(proxy.address);
    expect(stack.tls).toEqual([
      {
        name: 'temporal',
        handshake: expect.objectContaining({
          address: proxy.address,
          serverName: certificates.serverName,
          protocol: 'TLSv1.3',
          clientCertificateSent: true,
          certificate: expect.objectContaining({
            subject: `CN=${certificates.serverName}`,
            issuer: 'CN=skillsmith test CA',
            subjectAltName: expect.stringContaining(`DNS:${certificates.serverName}`),
          }),
        }),
      },
    ]);
    const human = await runSkillsmith(['up', '--check-only'], {
      ...tlsEnvironment,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: certificates.otherCa.certPath,
      DATABASE_URL: database.url,
      SKILLSMITH_HOME: join(scratch, 'home'),
    });
    expect(human.code).toBe(1);
    expect(human.stderr).toMatch(/^skillsmith: the TLS handshake with 127\.0\.0\.1:\d+ failed: \w+: .*certificate/m);
  }, 90_000);
});
