import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { childEnvironment } from './child-environment.ts';

/**
 * What the durability test and the fault suite (bench/faults.ts) share: worker processes that can
 * be SIGKILLed like a crashed host, and the skills of a tenant in the form two passes are compared.
 */
const bin = fileURLToPath(new URL('../../bin/skillsmith.js', import.meta.url));

/** A real `skillsmith worker` process (the compiled dist/), with only the given settings. */
export function startWorkerProcess(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [bin, 'worker'], {
    env: childEnvironment({ NODE_NO_WARNINGS: '1', ...env }),
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** SIGKILL, resolved once the process is gone (at once when it already is). */
export function killProcess(child: ChildProcess): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

export interface PassSkill {
  name: string;
  revision: number;
  success_count: number;
  attempt_count: number;
  provenance: unknown;
  superseded: boolean;
  content_sha256: string;
  /** Every stored revision of the skill, ascending: 1..n when none was duplicated or skipped. */
  revisions: number[];
}

/** A tenant's learned skills with their current SKILL.md digest and every revision stored: equal for two passes over the same runs. */
export async function passSkills(pool: pg.Pool, tenantId: string): Promise<PassSkill[]> {
  const { rows } = await pool.query<PassSkill>(
    `SELECT p.name, p.revision, p.success_count, p.attempt_count, p.provenance, p.superseded_by IS NOT NULL AS superseded,
            r.content_sha256, (SELECT array_agg(revision ORDER BY revision) FROM skill_revisions x WHERE x.tenant_id = p.tenant_id AND x.skill_id = p.skill_id) AS revisions
       FROM procedures p JOIN skill_revisions r ON r.tenant_id = p.tenant_id AND r.skill_id = p.skill_id AND r.revision = p.revision
      WHERE p.tenant_id = $1 ORDER BY p.name`,
    [tenantId],
  );
  return rows;
}

/** The skills whose stored revisions are not exactly 1..n (a revision written twice or one skipped). */
export function revisionGaps(skills: readonly PassSkill[]): PassSkill[] {
  return skills.filter((skill) => skill.revisions.some((revision, index) => revision !== index + 1));
}
