import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Services } from '../../src/app/services.ts';
import { SYNC_MANIFEST_FILE, syncSkillDirectory } from '../../src/skills/skill-directory-sync.ts';
import type { SkillRepository } from '../../src/store/skill-repository.ts';
import type { TestDatabase } from '../support/database.ts';
import { openTestServices } from '../support/test-services.ts';
import { skillPackage } from '../skills/skill-fixtures.ts';

const run = promisify(execFile);
let database: TestDatabase;
let skills: SkillRepository;
let scratch: string;

beforeAll(async () => {
  let services: Services;
  ({ database, services } = await openTestServices());
  skills = services.skills;
  scratch = await mkdtemp(join(tmpdir(), 'skillsmith-agents-'));
});

afterAll(async () => {
  await database?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

function cliEnv(extra: Record<string, string> = {}) {
  return {
    ...process.env,
    DATABASE_URL: database.url,
    SKILLSMITH_HOME: join(scratch, 'home'),
    SKILLSMITH_LOG_LEVEL: 'silent',
    NODE_NO_WARNINGS: '1',
    ...extra,
  };
}

async function skillsmith(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run('node', ['bin/skillsmith.js', ...args], { env: cliEnv(), timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failure.code === 'number' ? failure.code : 1, stdout: failure.stdout ?? '', stderr: failure.stderr ?? '' };
  }
}

describe('skillsmith agents', () => {
  it('set writes a new version each time, refuses unknown refs quoting them, and show prints the newest', async () => {
    await skills.install('cli-agents', skillPackage({ name: 'known-a' }), { source: 'operator' });
    await skills.install('cli-agents', skillPackage({ name: 'known-b' }), { source: 'operator' });
    await skills.install('cli-agents', skillPackage({ name: 'known-b', version: '1.0.1' }), { source: 'operator' });
    const first = await skillsmith('agents', 'set', 'ops', '--skills', 'known-a,known-b@1', '--tenant', 'cli-agents', '--json');
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({
      tenantId: 'cli-agents',
      agentId: 'ops',
      version: 1,
      enabledSkills: ['known-a', 'known-b@1'],
    });
    const second = await skillsmith('agents', 'set', 'ops', '--skills', 'known-b', '--tenant', 'cli-agents', '--json');
    expect(JSON.parse(second.stdout)).toMatchObject({ version: 2, enabledSkills: ['known-b'] });
    const refused = await skillsmith('agents', 'set', 'ops', '--skills', 'known-a,ghost,known-b@7', '--tenant', 'cli-agents');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('"ghost"');
    expect(refused.stderr).toContain('"known-b@7"');
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    const shown = await skillsmith('agents', 'show', 'ops', '--tenant', 'cli-agents', '--json');
    expect(JSON.parse(shown.stdout)).toMatchObject({ version: 2, enabledSkills: ['known-b'] });
    const older = await skillsmith('agents', 'show', 'ops', '--version', '1', '--tenant', 'cli-agents');
    expect(older.stdout).toContain('known-a, known-b@1');
    const elsewhere = await skillsmith('agents', 'show', 'ops', '--tenant', 'other-tenant');
    expect(elsewhere.code).not.toBe(0);
    expect(elsewhere.stderr).toContain('no agent spec');
  });
});

describe('skillsmith skills sync', () => {
  it('writes every active skill with members, skips unchanged files, removes only what it wrote, warns skill_too_large', async () => {
    const tenant = 'sync';
    await skills.install(tenant, skillPackage({ name: 'small-skill' }, { extraFiles: { 'references/a.md': 'A' } }), { source: 'operator' });
    const bigBody = Array.from({ length: 120 }, (_, index) => `${index}. A step that takes some words to describe.`).join('\n');
    await skills.install(tenant, skillPackage({ name: 'big-skill' }, { body: bigBody }), { source: 'operator' });
    const directory = join(scratch, 'ssot');

    const first = await skillsmith('skills', 'sync', '--dir', directory, '--tenant', tenant, '--json');
    expect(first.code).toBe(0);
    const written = JSON.parse(first.stdout);
    expect(written.written.sort()).toEqual(['big-skill/SKILL.md', 'small-skill/SKILL.md', 'small-skill/references/a.md']);
    expect(written.warnings).toEqual([expect.objectContaining({ code: 'skill_too_large', path: 'big-skill/SKILL.md' })]);
    expect(first.stderr).toContain('warning skill_too_large');
    expect(await readFile(join(directory, 'small-skill', 'references', 'a.md'), 'utf8')).toBe('A');

    const before = (await stat(join(directory, 'small-skill', 'SKILL.md'))).mtimeMs;
    const second = JSON.parse((await skillsmith('skills', 'sync', '--dir', directory, '--tenant', tenant, '--json')).stdout);
    expect(second.written).toEqual([]);
    expect(second.unchanged).toHaveLength(3);
    expect((await stat(join(directory, 'small-skill', 'SKILL.md'))).mtimeMs).toBe(before);

    // A human's file and a human's edit are never touched; an archived skill's files go.
    await writeFile(join(directory, 'README.md'), "ours, not sync's");
    await mkdir(join(directory, 'hand-made'), { recursive: true });
    await writeFile(join(directory, 'hand-made', 'SKILL.md'), 'hand written');
    await writeFile(join(directory, 'small-skill', 'references', 'a.md'), 'edited by a human');
    await skills.archive(tenant, 'big-skill', 1);
    await skills.install(
      tenant,
      skillPackage({ name: 'small-skill' }, { body: '# Instructions\n\n1. Read twice.', extraFiles: { 'references/a.md': 'A2' } }),
      { source: 'operator' },
    );
    const third = JSON.parse((await skillsmith('skills', 'sync', '--dir', directory, '--tenant', tenant, '--json')).stdout);
    expect(third.removed).toEqual(['big-skill/SKILL.md']);
    expect(third.written).toEqual(['small-skill/SKILL.md']);
    expect(third.warnings).toEqual([expect.objectContaining({ code: 'locally_modified', path: 'small-skill/references/a.md' })]);
    expect(await readFile(join(directory, 'small-skill', 'references', 'a.md'), 'utf8')).toBe('edited by a human');
    expect(await readFile(join(directory, 'README.md'), 'utf8')).toBe("ours, not sync's");
    expect(await readFile(join(directory, 'hand-made', 'SKILL.md'), 'utf8')).toBe('hand written');
    await expect(stat(join(directory, 'big-skill'))).rejects.toThrow();
    expect(await readFile(join(directory, 'small-skill', 'SKILL.md'), 'utf8')).toContain('Read twice.');
    const manifest = JSON.parse(await readFile(join(directory, SYNC_MANIFEST_FILE), 'utf8'));
    expect(Object.keys(manifest.files).sort()).toEqual(['small-skill/SKILL.md', 'small-skill/references/a.md']);
  });

  it('the size limit is configurable and a directory synced for one tenant refuses another', async () => {
    const tenant = 'sync-limit';
    await skills.install(tenant, skillPackage({ name: 'tiny' }), { source: 'operator' });
    const directory = join(scratch, 'limit');
    const result = await syncSkillDirectory({ skills, tenantId: tenant, directory, maxSkillBytes: 50 });
    expect(result.warnings.map((warning) => warning.code)).toEqual(['skill_too_large']);
    await expect(syncSkillDirectory({ skills, tenantId: 'sync', directory, maxSkillBytes: 4096 })).rejects.toThrow(
      /synced for tenant sync-limit/,
    );
  });
});

async function startApiChild(env: NodeJS.ProcessEnv) {
  const child = spawn('node', ['bin/skillsmith.js', 'api'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`api did not start: ${output}`)), 60_000);
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on('exit', (code) => reject(new Error(`api exited ${code}: ${output}`)));
  });
  return {
    url,
    async stop(): Promise<number | null> {
      if (child.exitCode !== null) return child.exitCode;
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      return exited;
    },
  };
}

describe('skillsmith api', () => {
  it('on the embedded stack (stack file, no DATABASE_URL) serves concurrent sessions and loads without corrupting queries', async () => {
    const tenant = 'cli-stack';
    for (const name of ['stack-a', 'stack-b', 'stack-c']) await skills.install(tenant, skillPackage({ name }), { source: 'operator' });
    const home = join(scratch, 'stack-home');
    await mkdir(home, { recursive: true });
    await writeFile(
      join(home, 'stack.json'),
      JSON.stringify({
        pid: process.pid,
        startedAt: new Date().toISOString(),
        temporalAddress: '127.0.0.1:7233',
        temporalUiUrl: null,
        namespace: 'default',
        taskQueue: 'skillsmith',
        databaseUrl: database.url,
        embeddedDatabase: true,
      }),
    );
    expect((await skillsmith('agents', 'set', 'bot', '--skills', 'stack-a,stack-b,stack-c', '--tenant', tenant)).code).toBe(0);
    const secret = 'cli-stack-token-0123456789';
    const { DATABASE_URL: _omitted, ...env } = cliEnv({
      SKILLSMITH_HOME: home,
      SKILLSMITH_API_PORT: '0',
      SKILLSMITH_API_TOKENS: JSON.stringify([{ token: secret, tenantId: tenant, principal: 'test', scopes: ['session.write'] }]),
    });
    const api = await startApiChild(env);
    try {
      const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };
      const post = (path: string, body: unknown) => fetch(`${api.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
      const opened = await Promise.all(Array.from({ length: 12 }, () => post('/v1/sessions', { agentId: 'bot', tools: [] })));
      expect(opened.map((response) => response.status)).toEqual(Array(12).fill(201));
      const ids = await Promise.all(opened.map(async (response) => ((await response.json()) as { id: string }).id));
      const loads = await Promise.all(
        ids.flatMap((id) => ['stack-a', 'stack-b', 'stack-c'].map((name) => post(`/v1/sessions/${id}/skills/load`, { name }))),
      );
      const statuses = loads.map((response) => response.status);
      expect(statuses.filter((status) => status === 200)).toHaveLength(24);
      expect(statuses.filter((status) => status === 409)).toHaveLength(12);
    } finally {
      expect(await api.stop()).toBe(0);
    }
  });

  it('listens on 127.0.0.1, answers with the configured tokens, and stops on SIGTERM', async () => {
    await skills.install('cli-api', skillPackage({ name: 'served' }), { source: 'operator' });
    const tokens = JSON.stringify([{ token: 'cli-api-token-0123456789', tenantId: 'cli-api', principal: 'test', scopes: ['skill.read'] }]);
    const api = await startApiChild(cliEnv({ SKILLSMITH_API_PORT: '0', SKILLSMITH_API_TOKENS: tokens }));
    try {
      expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
      const listed = await fetch(`${api.url}/v1/skills`, { headers: { authorization: 'Bearer cli-api-token-0123456789' } });
      expect(listed.status).toBe(200);
      expect(((await listed.json()) as { skills: { name: string }[] }).skills.map((skill) => skill.name)).toEqual(['served']);
    } finally {
      expect(await api.stop()).toBe(0);
    }
  });
});
