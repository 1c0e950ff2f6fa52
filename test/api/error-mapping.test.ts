import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Unauthorized } from '../../src/api/auth.ts';
import { createErrorHandler } from '../../src/api/errors.ts';
import { EmbeddingModelUnavailable } from '../../src/embedding/embedding-errors.ts';
import { createLogger } from '../../src/logging/logger.ts';
import { ProcedureNotFound } from '../../src/procedures/procedure-repository.ts';
import { SkillNotFound } from '../../src/skills/skill-errors.ts';
import { SkillBodyEmpty, SkillNameNotUnique } from '../../src/skills/validation-errors.ts';
import { SkillsmithError } from '../../src/errors/skillsmith-error.ts';
import { validateSkillPackage } from '../../src/skills/validator.ts';
import { rawPackage } from '../skills/skill-fixtures.ts';

function refusedPackage(): Error {
  try {
    validateSkillPackage(rawPackage('deploy', '---\nname: Deploy\ndescription: ""\n---\nbody\n'), { defaultLicense: 'MIT' });
  } catch (error) {
    return error as Error;
  }
  throw new Error('the package was accepted');
}

/** An error no table has ever heard of: only its own properties can map it. */
class QuotaSpent extends SkillsmithError {
  static override readonly code = 'QuotaSpent';
  static override readonly httpStatus = 429;
  constructor(readonly remaining: number) {
    super(`quota spent, ${remaining} left`);
  }
}

/** SkillNotFound's definition under another class name: a rename keeps code and status. */
class SkillMissing extends SkillsmithError {
  static override readonly code = 'SkillNotFound';
  static override readonly httpStatus = 404;
}

const thrown: Record<string, () => Error> = {
  'unknown-to-any-table': () => new QuotaSpent(0),
  renamed: () => new SkillMissing('skill "deploy" not found'),
  'skill-not-found': () => new SkillNotFound('deploy@3'),
  unauthorized: () => new Unauthorized('no bearer token'),
  'validation-default': () => new SkillBodyEmpty(),
  'validation-override': () => new SkillNameNotUnique('deploy', 2),
  'validation-all': refusedPackage,
  'embedder-down': () => new EmbeddingModelUnavailable('test-model', ['/models'], 'no such file'),
  'internal-domain-error': () => new ProcedureNotFound('no procedure named "x" in tenant acme'),
  'plain-error': () => new Error('connection reset by peer'),
};

describe("API error mapping: by the error's own properties", () => {
  const app = Fastify();
  beforeAll(async () => {
    app.setErrorHandler(createErrorHandler(createLogger('silent')));
    app.get<{ Params: { kind: string } }>('/throw/:kind', async (request) => {
      throw thrown[request.params.kind]!();
    });
    await app.ready();
  });
  afterAll(() => app.close());

  const get = async (kind: string) => {
    const response = await app.inject({ method: 'GET', url: `/throw/${kind}` });
    return { status: response.statusCode, body: response.json(), headers: response.headers };
  };

  it('answers a SkillsmithError no table knows with its own status, code and fields', async () => {
    expect(await get('unknown-to-any-table')).toMatchObject({
      status: 429,
      body: { error: { code: 'QuotaSpent', message: 'quota spent, 0 left', details: { remaining: 0 } } },
    });
  });

  it('a class renamed with its definition kept still answers 404, never 500', async () => {
    expect(await get('renamed')).toMatchObject({ status: 404, body: { error: { code: 'SkillNotFound' } } });
  });

  it('maps domain errors by their httpStatus, with their own fields as details', async () => {
    expect(await get('skill-not-found')).toMatchObject({
      status: 404,
      body: { error: { code: 'SkillNotFound', details: { ref: 'deploy@3' } } },
    });
    const unauthorized = await get('unauthorized');
    expect(unauthorized).toMatchObject({ status: 401, body: { error: { code: 'Unauthorized', details: {} } } });
    expect(unauthorized.headers['www-authenticate']).toBe('Bearer');
    expect(await get('embedder-down')).toMatchObject({
      status: 503,
      body: { error: { code: 'EmbeddingModelUnavailable', details: { modelId: 'test-model', searched: ['/models'] } } },
    });
  });

  it('a skill validation failure is 422 unless its class says otherwise', async () => {
    expect(await get('validation-default')).toMatchObject({
      status: 422,
      body: { error: { code: 'SkillBodyEmpty', details: { rule: 'body.tokens', field: 'body', measured: 0, limit: 3000 } } },
    });
    expect(await get('validation-override')).toMatchObject({ status: 409, body: { error: { code: 'SkillNameNotUnique' } } });
  });

  it('a refused package lists every rule it broke in details.violations', async () => {
    const { status, body } = await get('validation-all');
    expect(status).toBe(422);
    expect(body.error.code).toBe('SkillNameInvalid');
    expect(body.error.details.violations).toEqual([
      expect.objectContaining({ code: 'SkillNameInvalid', field: 'name', rule: 'name.pattern', measured: 'Deploy' }),
      expect.objectContaining({ code: 'SkillDescriptionInvalid', field: 'description', measured: 0 }),
    ]);
  });

  it('a 500 SkillsmithError and a foreign error both answer InternalError and leak nothing', async () => {
    for (const kind of ['internal-domain-error', 'plain-error']) {
      expect(await get(kind)).toEqual({
        status: 500,
        body: { error: { code: 'InternalError', message: 'internal error', details: {} } },
        headers: expect.anything(),
      });
    }
  });
});
