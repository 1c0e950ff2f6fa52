import type { Command } from 'commander';
import type { CliContext } from '../context.ts';

/**
 * `skillsmith skills sync --dir DIR`: every active skill as DIR/<name>/SKILL.md plus members,
 * sha256-deduplicated. JSON (--json): { directory, skills, written[], unchanged[], removed[],
 * warnings: [{code, path, message}] }. Warnings also go to stderr as `warning <code>: …`.
 */
export function registerSkillsSyncCommand(skills: Command, context: CliContext): void {
  skills
    .command('sync')
    .description('write every active skill to DIR/<name>/ (sha256 dedup; removes only files it wrote)')
    .requiredOption('--dir <dir>', 'the shared skills directory')
    .action(async (options: { dir: string }, command: Command) => {
      const { tenant, json } = command.optsWithGlobals<{ tenant: string; json: boolean }>();
      const { syncSkillDirectory } = await import('../../skills/skill-directory-sync.ts');
      const result = await syncSkillDirectory({
        skills: (await context.services()).skills,
        tenantId: tenant,
        directory: options.dir,
        maxSkillBytes: context.config.skillSyncMaxBytes,
      });
      for (const warning of result.warnings) process.stderr.write(`warning ${warning.code}: ${warning.message}\n`);
      context.output.result(
        json,
        result,
        () =>
          `synced ${result.skills} skills to ${result.directory}: ${result.written.length} written, ${result.unchanged.length} unchanged, ${result.removed.length} removed, ${result.warnings.length} warnings`,
      );
    });
}
