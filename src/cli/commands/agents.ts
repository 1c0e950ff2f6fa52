import type { Command } from 'commander';
import type { AgentSpec } from '../../sessions/agent-spec-repository.ts';
import type { CliContext } from '../context.ts';

/**
 * `skillsmith agents set AGENT --skills a,b@3` writes a new agent spec version (every ref must
 * resolve now; unknown refs are refused, quoted); `agents show AGENT [--version N]`.
 * JSON (--json): { tenantId, agentId, version, enabledSkills: string[], createdAt }.
 */
interface GlobalOptions {
  tenant: string;
  json: boolean;
}

function specView(spec: AgentSpec) {
  return {
    tenantId: spec.tenantId,
    agentId: spec.agentId,
    version: spec.version,
    enabledSkills: spec.enabledSkills,
    createdAt: spec.createdAt.toISOString(),
  };
}

function describeSpec(spec: AgentSpec): string {
  const skills = spec.enabledSkills.length > 0 ? spec.enabledSkills.join(', ') : '(none)';
  return `${spec.agentId} version ${spec.version} (${spec.createdAt.toISOString()})\n  skills: ${skills}`;
}

export function registerAgentsCommands(program: Command, context: CliContext): void {
  const agents = program.command('agents').description("versioned agent specs: which skills an agent's sessions see");

  const repository = async () => (await context.services()).agentSpecs;

  agents
    .command('set')
    .description('write a new version of an agent spec (NAME floats to the newest active revision; NAME@REV pins)')
    .argument('<agent>', 'agent id')
    .requiredOption('--skills <refs>', 'comma-separated skill refs in catalog order, e.g. a,b@3 ("" for none)')
    .action(async (agentId: string, options: { skills: string }, command: Command) => {
      const { tenant, json } = command.optsWithGlobals<GlobalOptions>();
      const refs = options.skills
        .split(',')
        .map((ref) => ref.trim())
        .filter((ref) => ref.length > 0);
      const spec = await (await repository()).set(tenant, agentId, refs);
      context.output.result(json, specView(spec), () => `wrote ${describeSpec(spec)}`);
    });

  agents
    .command('show')
    .description('show the newest (or a given) version of an agent spec')
    .argument('<agent>', 'agent id')
    .option('--version <n>', 'that version instead of the newest')
    .action(async (agentId: string, options: { version?: string }, command: Command) => {
      const { tenant, json } = command.optsWithGlobals<GlobalOptions>();
      let version: number | undefined;
      if (options.version !== undefined) {
        if (!/^[1-9][0-9]{0,8}$/.test(options.version))
          throw new Error(`invalid --version ${JSON.stringify(options.version)}: a positive integer`);
        version = Number(options.version);
      }
      const spec = await (await repository()).get(tenant, agentId, version);
      context.output.result(json, specView(spec), () => describeSpec(spec));
    });
}
