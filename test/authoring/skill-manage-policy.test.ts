import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { SkillAuthoringDenied, SkillAuthoringDisabled, SkillManageRequestInvalid } from '../../src/authoring/authoring-errors.ts';
import { createSkillManage } from '../../src/authoring/skill-manage.ts';
import { decodeRequestPackage, skillManageRequestSchema } from '../../src/authoring/skill-manage-contract.ts';
import type { SkillRepository } from '../../src/store/skill-repository.ts';
import { createRequest, trustedContext } from './authoring-fixtures.ts';

/**
 * The policy stage runs before anything is read or written: these tests give skill_manage a
 * pool that records every statement and a repository that fails on any call.
 */
function recordingPool() {
  const statements: string[] = [];
  const pool = {
    async query(text: string, values: unknown[]) {
      statements.push(text.trim().split(/\s+/).slice(0, 3).join(' '));
      return {
        rows: [
          {
            id: '1',
            tenant_id: values[0],
            session_id: null,
            run_id: values[2],
            invocation_id: values[3],
            kind: values[4],
            name: values[5],
            revision: null,
            reason: values[7],
            detail: JSON.parse(String(values[8])),
            at: new Date(),
          },
        ],
      };
    },
  };
  return { pool: pool as unknown as pg.Pool, statements };
}

const untouchable = new Proxy({} as SkillRepository, {
  get(_target, property) {
    return () => {
      throw new Error(`the repository was called (${String(property)}) before the policy stage finished`);
    };
  },
});

/**
 * Every tenant activated: like the pool and the repository, the rollout gate is replaced here; the
 * real gate refusing a tenant is tested in test/rollout/activation.store.test.ts.
 */
const everyTenantActivated = { requireActive: async (): Promise<void> => undefined };

function manageWith(enabled = true) {
  const { pool, statements } = recordingPool();
  const skills = createSkillManage({
    pool,
    repository: untouchable,
    defaultLicense: 'Apache-2.0',
    settings: { enabled, approvalProfile: 'none' },
    activation: everyTenantActivated,
  });
  return { skills, statements };
}

describe('skill_manage policy stage', () => {
  it('refuses with SkillAuthoringDisabled, touching nothing, when foreground authoring is off', async () => {
    const { skills, statements } = manageWith(false);
    await expect(skills.manage(trustedContext('t', 'i'), createRequest('x'))).rejects.toBeInstanceOf(SkillAuthoringDisabled);
    await expect(skills.manage(trustedContext('t', 'i'), createRequest('x'))).rejects.toThrow(/SKILLSMITH_AUTHORING_ENABLED/);
    expect(statements).toEqual([]);
  });

  it.each([
    ['scope', trustedContext('t', 'i', { scopes: ['skill.writex'] }), createRequest('x')],
    ['origin_trust', trustedContext('t', 'i', { originTrust: 'untrusted', taint: 'an MCP tool result' }), createRequest('x')],
    [
      'review_archive',
      trustedContext('t', 'i', { reviewRun: { loaded: new Map([['x', 1]]) } }),
      { operation: 'archive', name: 'x', expectedRevision: 1 },
    ],
  ])('denies %s having written only the denial event and read nothing', async (reason, context, request) => {
    const { skills, statements } = manageWith();
    const failure = await skills.manage(context, request).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SkillAuthoringDenied);
    expect((failure as SkillAuthoringDenied).reason).toBe(reason);
    expect(statements).toEqual(['INSERT INTO skill_events']);
  });

  it('checks scope before origin trust', async () => {
    const { skills } = manageWith();
    const failure = await skills
      .manage(trustedContext('t', 'i', { scopes: [], originTrust: 'untrusted' }), createRequest('x'))
      .catch((error: unknown) => error);
    expect((failure as SkillAuthoringDenied).reason).toBe('scope');
  });
});

describe('skill_manage request schema', () => {
  it.each([
    ['an unknown operation', { operation: 'version', name: 'x' }],
    ['edit without expectedRevision', { operation: 'edit', name: 'x', package: { files: {} } }],
    ['patch without expectedRevision', { operation: 'patch', name: 'x', skillMd: '---' }],
    ['archive without expectedRevision', { operation: 'archive', name: 'x' }],
    ['expectedRevision 0', { operation: 'archive', name: 'x', expectedRevision: 0 }],
    ['patch carrying a package', { operation: 'patch', name: 'x', expectedRevision: 1, skillMd: 'a', package: { files: {} } }],
    [
      'a member that is neither text nor base64',
      { operation: 'create', name: 'x', package: { files: { 'a.bin': { base64: 'not base64!' } } } },
    ],
  ])('refuses %s with SkillManageRequestInvalid before the policy stage reads anything', async (_label, request) => {
    expect(skillManageRequestSchema.safeParse(request).success).toBe(false);
    const { skills, statements } = manageWith();
    await expect(skills.manage(trustedContext('t', 'i'), request)).rejects.toBeInstanceOf(SkillManageRequestInvalid);
    expect(statements).toEqual([]);
  });

  it('refuses a malformed context with SkillManageRequestInvalid naming the field', async () => {
    const { skills, statements } = manageWith();
    await expect(skills.manage(trustedContext('Bad Tenant', 'i'), createRequest('x'))).rejects.toThrow(/context\.tenantId/);
    await expect(
      skills.manage({ ...trustedContext('t', 'i'), originTrust: 'system' as 'user' }, createRequest('x')),
    ).rejects.toBeInstanceOf(SkillManageRequestInvalid);
    expect(statements).toEqual([]);
  });

  it('decodes text members as UTF-8 and base64 members as bytes, naming the directory after the skill', () => {
    const decoded = decodeRequestPackage('named', { 'SKILL.md': 'héllo', 'b.bin': { base64: Buffer.from([0, 255]).toString('base64') } });
    expect(decoded.directoryName).toBe('named');
    expect(decoded.files.get('SKILL.md')).toEqual(new TextEncoder().encode('héllo'));
    expect(decoded.files.get('b.bin')).toEqual(new Uint8Array([0, 255]));
  });
});
