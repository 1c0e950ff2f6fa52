import type pg from 'pg';
import { storableString } from '../input/storable-text.ts';
import { SkillNotFound } from '../skills/skill-errors.ts';
import { formatSkillRef, parseSkillRef, SkillRefInvalid } from '../skills/skill-ref.ts';
import { mapRow } from '../store/row-mapping.ts';
import type { SkillRepository } from '../store/skill-repository.ts';
import { AgentSpecNotFound, DuplicateSkillName, SkillRefsUnresolved } from './session-errors.ts';

/**
 * AgentSpecRepository: the only module with SQL for `agent_specs`. A spec is versioned per agent;
 * every `set` writes a new version, so a rollback is a new version holding a pin.
 */
export const agentIdSchema = storableString().min(1).max(128);

export interface AgentSpec {
  tenantId: string;
  agentId: string;
  version: number;
  /** Skill refs in catalog order: `name` floats, `name@rev` pins. */
  enabledSkills: string[];
  createdAt: Date;
}

interface AgentSpecRow {
  tenant_id: string;
  agent_id: string;
  version: number;
  enabled_skills: string[];
  created_at: Date;
}

const toAgentSpec = (row: AgentSpecRow): AgentSpec => mapRow(row);

export interface AgentSpecRepository {
  /**
   * Writes the next version. Every ref must parse and resolve now (unknown refs are refused,
   * all of them quoted); names may not repeat.
   */
  set(tenantId: string, agentId: string, refs: readonly string[]): Promise<AgentSpec>;
  /** The newest version, or exactly `version`. */
  get(tenantId: string, agentId: string, version?: number): Promise<AgentSpec>;
}

const UNIQUE_VIOLATION = '23505';

export function createAgentSpecRepository({ pool, skills }: { pool: pg.Pool; skills: SkillRepository }): AgentSpecRepository {
  async function set(tenantId: string, agentId: string, refs: readonly string[]): Promise<AgentSpec> {
    agentIdSchema.parse(agentId);
    const unresolved: { ref: string; reason: string }[] = [];
    const normalized: string[] = [];
    const names = new Set<string>();
    for (const text of refs) {
      let ref;
      try {
        ref = parseSkillRef(text);
      } catch (error) {
        if (error instanceof SkillRefInvalid) {
          unresolved.push({ ref: text, reason: 'not <name> or <name>@<revision>' });
          continue;
        }
        throw error;
      }
      if (names.has(ref.name)) throw new DuplicateSkillName(ref.name, 'the agent spec');
      names.add(ref.name);
      try {
        await skills.resolve(tenantId, ref);
      } catch (error) {
        if (error instanceof SkillNotFound) {
          unresolved.push({ ref: text, reason: ref.revision === null ? 'no active revision' : 'no such skill or revision' });
          continue;
        }
        throw error;
      }
      normalized.push(formatSkillRef(ref));
    }
    if (unresolved.length > 0) throw new SkillRefsUnresolved(unresolved);
    for (let attempt = 0; ; attempt++) {
      try {
        const { rows } = await pool.query<AgentSpecRow>(
          `INSERT INTO agent_specs (tenant_id, agent_id, version, enabled_skills)
           SELECT $1, $2, COALESCE(MAX(version), 0) + 1, $3::jsonb FROM agent_specs WHERE tenant_id = $1 AND agent_id = $2
           RETURNING tenant_id, agent_id, version, enabled_skills, created_at`,
          [tenantId, agentId, JSON.stringify(normalized)],
        );
        return toAgentSpec(rows[0]!);
      } catch (error) {
        // Two concurrent writers computed the same next version: the loser retries.
        if ((error as { code?: string }).code !== UNIQUE_VIOLATION || attempt >= 5) throw error;
      }
    }
  }

  async function get(tenantId: string, agentId: string, version?: number): Promise<AgentSpec> {
    const { rows } =
      version === undefined
        ? await pool.query<AgentSpecRow>(
            `SELECT tenant_id, agent_id, version, enabled_skills, created_at FROM agent_specs
             WHERE tenant_id = $1 AND agent_id = $2 ORDER BY version DESC LIMIT 1`,
            [tenantId, agentId],
          )
        : await pool.query<AgentSpecRow>(
            `SELECT tenant_id, agent_id, version, enabled_skills, created_at FROM agent_specs
             WHERE tenant_id = $1 AND agent_id = $2 AND version = $3`,
            [tenantId, agentId, version],
          );
    const row = rows[0];
    if (!row) throw new AgentSpecNotFound(agentId, version);
    return toAgentSpec(row);
  }

  return { set, get };
}
