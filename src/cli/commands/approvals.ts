import type { Command } from 'commander';
import { z } from 'zod';
import type { Approvals } from '../../authoring/approvals.ts';
import type { Approval } from '../../authoring/approval.ts';
import type { CliContext } from '../context.ts';

/**
 * `skillsmith approvals list | show ID | approve ID | reject ID` — the SKILL_AUTHORING queue.
 * `list` first expires pending approvals older than SKILLSMITH_APPROVAL_TTL_HOURS.
 * JSON shapes (with --json): list → { approvals: Approval[] } (without the diff);
 * show / approve / reject → Approval (with the diff). An approval that conflicts at approve
 * time is printed with status "conflicted" and the command exits 1.
 */
interface GlobalOptions {
  tenant: string;
  json: boolean;
}

const statusSchema = z.enum(['pending', 'approved', 'rejected', 'expired', 'conflicted']);

function summary(approval: Approval): string {
  const revisions =
    approval.currentRevision === 0
      ? `new, proposed @${approval.proposedRevision}`
      : `@${approval.currentRevision} → @${approval.proposedRevision}`;
  const resolved = approval.resolvedAt
    ? ` by ${approval.resolvedBy} after ${approval.latencyMs} ms${approval.resolutionReason ? ` (${approval.resolutionReason})` : ''}`
    : '';
  return `${approval.id}  ${approval.status}  ${approval.operation} ${approval.skillName} (${revisions})  requested by ${approval.requestedByPrincipalId}${resolved}`;
}

function detailed(approval: Approval): string {
  const { added, removed, changed, unchanged } = approval.memberChanges;
  return [
    summary(approval),
    `members: added [${added.join(', ')}], removed [${removed.join(', ')}], changed [${changed.join(', ')}], unchanged ${unchanged.length}`,
    '',
    approval.diff,
  ].join('\n');
}

function json(approval: Approval): Omit<Approval, 'createdAt' | 'resolvedAt'> & { createdAt: string; resolvedAt: string | null } {
  return { ...approval, createdAt: approval.createdAt.toISOString(), resolvedAt: approval.resolvedAt?.toISOString() ?? null };
}

async function withApprovals<T>(context: CliContext, fn: (approvals: Approvals) => Promise<T>): Promise<T> {
  return fn((await context.services()).approvals);
}

export function registerApprovalsCommands(program: Command, context: CliContext): void {
  const approvals = program.command('approvals').description('list, show, approve and reject SKILL_AUTHORING approvals');

  approvals
    .command('list')
    .description('list approvals (expiring pending ones older than the TTL first)')
    .option('--status <status>', 'only approvals with this status (pending, approved, rejected, expired, conflicted)')
    .action(async (options: { status?: string }, command: Command) => {
      const { tenant, json: asJson } = command.optsWithGlobals<GlobalOptions>();
      const parsedStatus = options.status === undefined ? undefined : statusSchema.safeParse(options.status);
      if (parsedStatus && !parsedStatus.success) {
        throw new Error(`invalid --status ${JSON.stringify(options.status)}: one of ${statusSchema.options.join(', ')}`);
      }
      const status = parsedStatus?.data;
      const listed = await withApprovals(context, async (queue) => {
        await queue.expire(tenant);
        return queue.list(tenant, status === undefined ? {} : { status });
      });
      context.output.result(asJson, { approvals: listed.map((approval) => ({ ...json(approval), diff: undefined })) }, () =>
        listed.length === 0 ? `no approvals in tenant ${tenant}` : listed.map(summary).join('\n'),
      );
    });

  approvals
    .command('show')
    .description('show one approval with its SKILL.md diff and member changes')
    .argument('<id>', 'the approval id')
    .action(async (id: string, _options: unknown, command: Command) => {
      const { tenant, json: asJson } = command.optsWithGlobals<GlobalOptions>();
      const approval = await withApprovals(context, (queue) => queue.show(tenant, id));
      context.output.result(asJson, json(approval), () => detailed(approval));
    });

  approvals
    .command('approve')
    .description('install the approved package (compare-and-swap on the revision it was raised against)')
    .argument('<id>', 'the approval id')
    .option('--by <principal>', 'who approves', 'operator')
    .action(async (id: string, options: { by: string }, command: Command) => {
      const { tenant, json: asJson } = command.optsWithGlobals<GlobalOptions>();
      const approval = await withApprovals(context, (queue) => queue.approve(tenant, id, { resolvedBy: options.by }));
      context.output.result(asJson, json(approval), () =>
        approval.status === 'approved'
          ? `approved: installed ${approval.skillName}@${approval.installedRevision}\n${summary(approval)}`
          : `not installed: ${approval.status}\n${summary(approval)}`,
      );
      if (approval.status !== 'approved') process.exitCode = 1;
    });

  approvals
    .command('reject')
    .description('reject a pending approval; nothing is installed')
    .argument('<id>', 'the approval id')
    .option('--by <principal>', 'who rejects', 'operator')
    .option('--reason <text>', 'why')
    .action(async (id: string, options: { by: string; reason?: string }, command: Command) => {
      const { tenant, json: asJson } = command.optsWithGlobals<GlobalOptions>();
      const approval = await withApprovals(context, (queue) =>
        queue.reject(tenant, id, { resolvedBy: options.by, ...(options.reason === undefined ? {} : { reason: options.reason }) }),
      );
      context.output.result(asJson, json(approval), () => `rejected\n${summary(approval)}`);
    });
}
