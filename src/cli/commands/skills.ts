import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { Command, Option } from 'commander';
import { z } from 'zod';
import type { SkillRepository } from '../../store/skill-repository.ts';
import type { SkillSummary } from '../../skills/skill-summary.ts';
import type { ProcedureState } from '../../procedures/procedure.ts';
import type { CliContext } from '../context.ts';
import { registerSkillsSyncCommand } from './skills-sync.ts';

/**
 * `skillsmith skills …`: install, list, show, export and archive skill packages.
 * JSON shapes (with --json), all camelCase:
 *   install            → SkillSummary & { outcome: 'installed' | 'unchanged', versionDefaulted: boolean }
 *   archive            → SkillSummary
 *   show               → SkillSummary & LearnedState & { body: string }
 *   list               → { skills: Array<SkillSummary & LearnedState> }
 * LearnedState: `state` (active | superseded | disabled | archived: what recall and the catalog make
 * of it) and `procedure` (a learned skill's track record and lineage, else null).
 *   export             → { name, revision, contentSha256, directory, files: string[] }
 * Export writes the stored members verbatim, so the tree re-installs to the same sha256;
 * --canonical rewrites SKILL.md in the agentskills.io shape instead.
 */
/** The skill modules (YAML, tar, token counting) load when a skills command runs, not for `--help`. */
async function skillModules() {
  const [archive, format, skillPackage, ref, summary] = await Promise.all([
    import('../../skills/package-archive.ts'),
    import('../../skills/skill-format.ts'),
    import('../../skills/skill-package.ts'),
    import('../../skills/skill-ref.ts'),
    import('../../skills/skill-summary.ts'),
  ]);
  return { ...archive, ...format, ...skillPackage, ...ref, ...summary };
}

interface LearnedState {
  state: 'active' | 'superseded' | 'disabled' | 'archived';
  procedure: ProcedureState | null;
}

function learnedState(summary: SkillSummary, procedure: ProcedureState | undefined): LearnedState {
  const state = summary.status !== 'active' ? 'archived' : procedure && procedure.state !== 'live' ? procedure.state : 'active';
  return { state, procedure: procedure ?? null };
}

async function withLearnedState(
  context: CliContext,
  tenantId: string,
  summaries: SkillSummary[],
): Promise<Array<SkillSummary & LearnedState>> {
  const { findProcedureStates } = await import('../../procedures/procedure-repository.ts');
  const states = await findProcedureStates(
    await context.openPool(),
    tenantId,
    summaries.map((summary) => summary.name),
  );
  return summaries.map((summary) => ({ ...summary, ...learnedState(summary, states.get(summary.name)) }));
}

function describeState(skill: LearnedState): string {
  if (skill.state === 'superseded') return `superseded by ${skill.procedure!.supersededBy}`;
  if (skill.state === 'disabled') return 'disabled (skillsmith procedures enable NAME)';
  return skill.state;
}

function describeRevision(summary: SkillSummary & Partial<LearnedState>): string {
  const tools = summary.requiredTools.length > 0 ? summary.requiredTools.join(', ') : 'none';
  const record = summary.procedure
    ? `\n  track record: ${summary.procedure.successCount}/${summary.procedure.attemptCount} runs succeeded`
    : '';
  const state = summary.state ? describeState(summary as LearnedState) : summary.status;
  return [
    `${summary.name}@${summary.revision} (version ${summary.version}, ${state}, ${summary.source}, ${summary.trust})${record}`,
    `  description: ${summary.description}`,
    `  required tools: ${tools}`,
    `  license: ${summary.license}; ${summary.fileCount} files, ${summary.packageBytes} bytes, body ${summary.bodyTokens} tokens`,
    `  content_sha256: ${summary.contentSha256}`,
  ].join('\n');
}

const installSourceSchema = z.enum(['operator', 'builtin']);
const countSchema = z
  .string()
  .regex(/^[0-9]{1,9}$/, 'must be a non-negative integer')
  .transform(Number);

/** Parse one CLI argument with zod, failing with a one-line reason that names the option. */
function parseArgument<T>(schema: z.ZodType<T, string>, value: string, option: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new Error(`invalid ${option} ${JSON.stringify(value)}: ${parsed.error.issues[0]?.message ?? 'invalid value'}`);
  }
  return parsed.data;
}

interface GlobalOptions {
  tenant: string;
  json: boolean;
}

async function withRepository<T>(context: CliContext, fn: (repository: SkillRepository) => Promise<T>): Promise<T> {
  return fn((await context.services()).skills);
}

export function registerSkillsCommands(program: Command, context: CliContext): void {
  const skills = program.command('skills').description('install, list, show, export and archive skill packages');

  skills
    .command('install')
    .description('validate a skill package directory and install it as the next revision')
    .argument('<dir>', 'the package directory (its name must equal the skill name)')
    .addOption(new Option('--source <source>', 'who supplies the skill').choices(['operator', 'builtin']).default('operator'))
    .option('--expected-revision <n>', 'install only if the latest revision is n (0: only if no active revision)')
    .action(async (directory: string, options: { source: string; expectedRevision?: string }, command: Command) => {
      const { readPackageDirectory, summarizeRevision } = await skillModules();
      const { tenant, json } = command.optsWithGlobals<GlobalOptions>();
      const source = parseArgument(installSourceSchema, options.source, '--source');
      const expectedRevision =
        options.expectedRevision === undefined ? undefined : parseArgument(countSchema, options.expectedRevision, '--expected-revision');
      const skillPackage = await readPackageDirectory(directory);
      const { revision, outcome, versionDefaulted } = await withRepository(context, (repository) =>
        repository.installPackage(tenant, skillPackage, { source, ...(expectedRevision === undefined ? {} : { expectedRevision }) }),
      );
      const summary = summarizeRevision(revision);
      context.output.result(json, { ...summary, outcome, versionDefaulted }, () =>
        [
          outcome === 'unchanged'
            ? `unchanged: ${summary.name}@${summary.revision} already holds this content; nothing installed`
            : `installed ${describeRevision(summary)}`,
          versionDefaulted && outcome === 'installed'
            ? `  version ${summary.version} by default: the SKILL.md names none (set metadata.version to choose it)`
            : '',
        ]
          .filter(Boolean)
          .join('\n'),
      );
    });

  skills
    .command('list')
    .description('list the newest active revision of every skill')
    .option('--limit <n>', 'at most n skills', '100')
    .action(async (options: { limit: string }, command: Command) => {
      const { summarizeRevision } = await skillModules();
      const { tenant, json } = command.optsWithGlobals<GlobalOptions>();
      const limit = parseArgument(countSchema, options.limit, '--limit');
      const revisions = await withRepository(context, (repository) => repository.listActive(tenant, limit));
      const summaries = await withLearnedState(context, tenant, revisions.map(summarizeRevision));
      context.output.result(json, { skills: summaries }, () =>
        summaries.length === 0
          ? `no active skills in tenant ${tenant}`
          : summaries
              .map(
                (summary) => `${summary.name}@${summary.revision}  ${summary.version}  ${describeState(summary)}  ${summary.description}`,
              )
              .join('\n'),
      );
    });

  skills
    .command('show')
    .description('show one revision (NAME: newest active; NAME@REV: exactly that revision)')
    .argument('<ref>', 'NAME or NAME@REV')
    .action(async (ref: string, _options: unknown, command: Command) => {
      const { tenant, json } = command.optsWithGlobals<GlobalOptions>();
      const { parseSkillRef, summarizeRevision } = await skillModules();
      const revision = await withRepository(context, (repository) => repository.resolve(tenant, parseSkillRef(ref)));
      const [summary] = await withLearnedState(context, tenant, [summarizeRevision(revision)]);
      context.output.result(json, { ...summary!, body: revision.body }, () => `${describeRevision(summary!)}\n\n${revision.body}`);
    });

  skills
    .command('export')
    .description("write a revision's package to OUT/<name>/ exactly as stored (re-installs to the same sha256)")
    .argument('<ref>', 'NAME or NAME@REV')
    .requiredOption('--out <dir>', 'the directory to write <name>/ into')
    .option('--canonical', 'rewrite SKILL.md in the canonical agentskills.io shape (changes the sha256 of legacy-shaped packages)', false)
    .action(async (ref: string, options: { out: string; canonical: boolean }, command: Command) => {
      const { parseSkillRef, readPackageArchive, SKILL_MANIFEST_PATH, serializeSkillDocument, checkMemberPath } = await skillModules();
      const { tenant, json } = command.optsWithGlobals<GlobalOptions>();
      const exported = await withRepository(context, async (repository) => {
        const revision = await repository.resolve(tenant, parseSkillRef(ref));
        const skillPackage = await readPackageArchive(await repository.readArchive(tenant, revision), revision.name);
        return { revision, skillPackage };
      });
      const { revision, skillPackage } = exported;
      if (options.canonical) {
        skillPackage.files.set(SKILL_MANIFEST_PATH, new TextEncoder().encode(serializeSkillDocument(revision.manifest, revision.body)));
      }
      const target = resolve(options.out, revision.name);
      const existing = await readdir(target).catch(() => []);
      if (existing.length > 0) throw new Error(`${target} exists and is not empty; export into an empty directory`);
      const files = [...skillPackage.files.keys()].sort();
      for (const memberPath of files) {
        const destination = join(target, checkMemberPath(memberPath));
        await mkdir(dirname(destination), { recursive: true });
        await writeFile(destination, skillPackage.files.get(memberPath) ?? new Uint8Array(), { flag: 'wx', mode: 0o644 });
      }
      const result = {
        name: revision.name,
        revision: revision.revision,
        contentSha256: revision.contentSha256,
        directory: target,
        files,
      };
      context.output.result(json, result, () => `exported ${revision.name}@${revision.revision} (${files.length} files) to ${target}`);
    });

  skills
    .command('archive')
    .description('archive one revision: floating refs and the catalog skip it; pins to it still resolve')
    .argument('<ref>', 'NAME@REV')
    .action(async (ref: string, _options: unknown, command: Command) => {
      const { tenant, json } = command.optsWithGlobals<GlobalOptions>();
      const { parseSkillRef, summarizeRevision } = await skillModules();
      const parsed = parseSkillRef(ref);
      const revision = parsed.revision;
      if (revision === null) throw new Error(`archive needs NAME@REV, got ${JSON.stringify(ref)}`);
      const archived = await withRepository(context, (repository) => repository.archive(tenant, parsed.name, revision));
      const summary = summarizeRevision(archived);
      context.output.result(json, summary, () => `archived ${summary.name}@${summary.revision}`);
    });

  registerSkillsSyncCommand(skills, context);
}
