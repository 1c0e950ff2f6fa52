import { Presets, SingleBar } from 'cli-progress';
import type { Command } from 'commander';
import type { WorkflowHandle } from '@temporalio/client';
import { passScheduleId, type PassProgress } from '../../contracts/pass-contract.ts';
import { clusterOutcome } from '../../synthesis/pass-cluster.ts';
import { type PassRecord } from '../../contracts/pass-record.ts';
import { SkillsmithError } from '../../errors/skillsmith-error.ts';
import { recordedFailure, type FailureCause } from '../../contracts/failure-cause.ts';
import type { CliContext } from '../context.ts';

type GlobalOptions = { tenant: string; json: boolean };

/** Temporal's client and the pass store load when a command runs, not for `--help`. */
async function passModules() {
  const [{ ScheduleNotFoundError, WorkflowNotFoundError }, synthesisClient, passRepository] = await Promise.all([
    import('@temporalio/client'),
    import('../../client/synthesis-client.ts'),
    import('../../synthesis/pass-repository.ts'),
  ]);
  return { ScheduleNotFoundError, WorkflowNotFoundError, ...synthesisClient, ...passRepository };
}

export class PassNotRunning extends SkillsmithError {
  static override readonly code = 'PassNotRunning';
}

export function workflowUiLink(uiUrl: string | undefined, namespace: string, workflowId: string): string | undefined {
  return uiUrl ? `${uiUrl}/namespaces/${namespace}/workflows/${encodeURIComponent(workflowId)}` : undefined;
}

/**
 * A pass as the CLI prints it under --json: the record plus `failure` ({type, message} of a failed
 * pass's root cause, else null).
 */
export function presentPass(pass: PassRecord): PassRecord & { failure: FailureCause | null } {
  return { ...pass, failure: pass.status === 'failed' ? (recordedFailure(pass.outcome) ?? null) : null };
}

export function formatPass(pass: PassRecord): string {
  const c = pass.counts;
  const failure = pass.status === 'failed' ? recordedFailure(pass.outcome) : undefined;
  return [
    `${pass.id}  ${pass.status}${pass.outcome ? ` (${pass.outcome})` : ''}`,
    `  runs seen ${c.runsSeen}, sequences ${c.sequences}, clusters ${c.clusters}, qualifying ${c.qualifying}`,
    `  added ${c.added}, updated ${c.updated}, noop ${c.noop}, superseded ${c.superseded}, skipped ${c.skipped}, ` +
      `pending ${c.pending}${c.carried ? ` (${c.carried} taken over from earlier passes)` : ''}`,
    `  distiller ${pass.distiller}, ${pass.full ? 'full' : `since ${pass.since ?? 'the beginning'}`}, started ${pass.startedAt}${pass.finishedAt ? `, finished ${pass.finishedAt}` : ''}`,
    ...(failure ? [`  cause: ${failure.type}: ${failure.message}`] : []),
  ].join('\n');
}

function describeProgress(progress: PassProgress): string {
  const counts = Object.entries(progress.counts)
    .map(([key, value]) => `${key} ${value}`)
    .join(', ');
  const clusters = progress.stage === 'distilling' ? ` ${progress.clustersDone}/${progress.clustersTotal} clusters` : '';
  return `${progress.stage}${clusters}${counts ? ` (${counts})` : ''}`;
}

/**
 * Polls the pass's progress query until it ends: a live bar over the clusters on a terminal,
 * one line per change otherwise (both on stderr, so stdout stays the summary).
 */
export async function watchPass(handle: WorkflowHandle, settled?: Promise<PassRecord>, intervalMs = 1_000): Promise<PassRecord> {
  const { passResult, queryPassProgress } = await passModules();
  const bar = process.stderr.isTTY
    ? new SingleBar(
        { format: '{bar} {value}/{total} clusters | {status}', stream: process.stderr, hideCursor: true },
        Presets.shades_classic,
      )
    : undefined;
  bar?.start(0, 0, { status: 'starting' });
  let last = '';
  let done = false;
  const result = (settled ?? passResult(handle)).finally(() => {
    done = true;
  });
  while (!done) {
    try {
      const progress = await queryPassProgress(handle);
      const line = describeProgress(progress);
      if (bar) {
        bar.setTotal(progress.clustersTotal);
        bar.update(progress.clustersDone, { status: line });
      } else if (line !== last) {
        process.stderr.write(`${line}\n`);
      }
      last = line;
    } catch {
      // The pass may finish between two polls; the result below tells.
    }
    await Promise.race([result.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, intervalMs))]);
  }
  bar?.stop();
  const record = await result;
  if (!bar) process.stderr.write(`done: ${record.status}${record.outcome ? ` (${record.outcome})` : ''}\n`);
  return record;
}

/**
 * The pass's record once it ends. A failed pass's workflow fails (WorkflowFailedError, whose
 * message says nothing), but it records why before it does: answer with that record.
 */
export async function settledPass(context: CliContext, tenantId: string, handle: WorkflowHandle): Promise<PassRecord> {
  const { findPass, passResult } = await passModules();
  try {
    return await passResult(handle);
  } catch (error) {
    const record = await findPass(await context.openPool(), tenantId, handle.workflowId).catch(() => undefined);
    if (record && record.status !== 'running') return record;
    throw error;
  }
}

export function registerSynthesisCommands(program: Command, context: CliContext): void {
  const { config } = context;

  program
    .command('synthesize')
    .description('start a synthesis pass now (extract → embed → cluster → distill → reconcile → install)')
    .option('--wait', 'show progress and print the pass summary when it ends', false)
    .option('--full', 'consider every run, not only those since the last completed pass', false)
    .action(async (options: { wait: boolean; full: boolean }, command: Command) => {
      const { tenant, json } = command.optsWithGlobals<GlobalOptions>();
      const { startSynthesisPass } = await passModules();
      const client = await context.temporalClient();
      const handle = await startSynthesisPass(client, {
        tenantId: tenant,
        full: options.full,
        taskQueue: config.temporal.taskQueue,
        heartbeatTimeoutSeconds: config.synthesis.heartbeatTimeoutSeconds,
      });
      const link = workflowUiLink(await context.temporalUiUrl(), config.temporal.namespace, handle.workflowId);
      if (!options.wait) {
        context.output.result(json, { workflowId: handle.workflowId, runId: handle.firstExecutionRunId, uiUrl: link ?? null }, () =>
          [`started ${handle.workflowId}`, link ? `watch it: ${link}` : ''].filter(Boolean).join('\n'),
        );
        return;
      }
      if (!json) process.stderr.write(`started ${handle.workflowId}${link ? `\n${link}` : ''}\n`);
      const settled = settledPass(context, tenant, handle);
      const pass = json ? await settled : await watchPass(handle, settled);
      // A failed pass answers with its record and, beside it, the error envelope of its root cause.
      const presented = presentPass(pass);
      const error = presented.failure ? { error: { code: presented.failure.type, message: presented.failure.message } } : {};
      context.output.result(json, { ...presented, uiUrl: link ?? null, ...error }, () => formatPass(pass));
      if (pass.status === 'failed') process.exitCode = 1;
    });

  const passes = program
    .command('passes')
    .description('synthesis passes and their counts, newest first')
    .option('--limit <n>', 'how many', '20')
    .action(async (options: { limit: string }, command: Command) => {
      const { tenant, json } = command.optsWithGlobals<GlobalOptions>();
      const limit = Number(options.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new Error(`invalid --limit ${options.limit}: 1..1000`);
      const { listPasses } = await passModules();
      const records = await listPasses(await context.openPool(), tenant, limit);
      context.output.result(json, { passes: records.map(presentPass) }, () =>
        records.length ? records.map(formatPass).join('\n') : `no passes yet for tenant ${tenant}`,
      );
    });

  passes
    .command('show <id>')
    .description('one pass with every cluster it found and what became of it')
    .action(async (id: string, _options, command: Command) => {
      const { tenant, json } = command.optsWithGlobals<GlobalOptions>();
      const { findPass, listPassClusters } = await passModules();
      const pool = await context.openPool();
      const pass = await findPass(pool, tenant, id);
      if (!pass) throw new Error(`no pass ${JSON.stringify(id)} in tenant ${tenant}`);
      // outcome/outcomeReason: every cluster's fate (added, updated, noop, superseded, skipped, pending) and why.
      const clusters = (await listPassClusters(pool, tenant, id)).map(({ candidate, runIds, successfulRunIds, ...cluster }) => ({
        ...cluster,
        runCount: runIds.length,
        ...clusterOutcome({ ...cluster, candidate, runIds, successfulRunIds }, pass),
      }));
      context.output.result(json, { ...presentPass(pass), clusters }, () =>
        [
          formatPass(pass),
          ...clusters.map(
            (cluster) =>
              `  ${cluster.clusterKey} size ${cluster.size}, ${(cluster.successRate * 100).toFixed(0)}% ok: ${cluster.outcome}` +
              `${cluster.skillName && cluster.outcome !== 'skipped' && cluster.outcome !== 'pending' ? ` ${cluster.skillName}${cluster.revision === null ? '' : `@${cluster.revision}`}` : ''}` +
              `${cluster.outcomeReason ? ` (${cluster.outcomeReason})` : ''}`,
          ),
        ].join('\n'),
      );
    });

  passes
    .command('cancel <id>')
    .description('cancel a running pass: in-flight activities stop at their next heartbeat, nothing is half-installed')
    .action(async (id: string, _options, command: Command) => {
      const { json } = command.optsWithGlobals<GlobalOptions>();
      const { WorkflowNotFoundError } = await passModules();
      const client = await context.temporalClient();
      const handle = client.workflow.getHandle(id);
      try {
        // Cancelling an ended workflow is accepted and does nothing: say it ended instead.
        const { status } = await handle.describe();
        if (status.name !== 'RUNNING')
          throw new PassNotRunning(`pass ${id} already ended (${status.name.toLowerCase()}): nothing to cancel`);
        await handle.cancel();
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) throw new Error(`no running pass ${JSON.stringify(id)}`, { cause: error });
        throw error;
      }
      context.output.result(json, { workflowId: id, cancelRequested: true }, () => `cancel requested for ${id}`);
    });

  const schedule = program.command('schedule').description("the tenant's Temporal Schedule of synthesis passes");

  schedule
    .command('set')
    .description('create or change the schedule (overlapping passes are skipped)')
    .requiredOption('--every <interval>', 'e.g. 24h, 6h, 90m, 1d')
    .action(async (options: { every: string }, command: Command) => {
      const { tenant, json } = command.optsWithGlobals<GlobalOptions>();
      const { setSynthesisSchedule, describeSynthesisSchedule, parseEvery } = await passModules();
      // A bad --every is refused before Temporal is connected to.
      parseEvery(options.every);
      const client = await context.temporalClient();
      await setSynthesisSchedule(client, {
        tenantId: tenant,
        every: options.every,
        taskQueue: config.temporal.taskQueue,
        heartbeatTimeoutSeconds: config.synthesis.heartbeatTimeoutSeconds,
      });
      const description = await describeSynthesisSchedule(client, tenant);
      context.output.result(
        json,
        description,
        () => `schedule ${description.scheduleId}: every ${options.every}, next ${description.nextActionTimes[0] ?? '—'}`,
      );
    });

  schedule.command('show').action(async (_options, command: Command) => {
    const { tenant, json } = command.optsWithGlobals<GlobalOptions>();
    const { describeSynthesisSchedule, ScheduleNotFoundError, formatEvery } = await passModules();
    const description = await describeSynthesisSchedule(await context.temporalClient(), tenant).catch((error: Error) => {
      if (error instanceof ScheduleNotFoundError)
        throw new Error(`no schedule ${passScheduleId(tenant)}: create one with \`skillsmith schedule set --every 24h\``);
      throw error;
    });
    context.output.result(json, description, () =>
      [
        `${description.scheduleId}: every ${description.every.map(formatEvery).join(', ')}${description.paused ? ' (paused)' : ''}`,
        `next: ${description.nextActionTimes.slice(0, 3).join(', ') || '—'}`,
        ...description.recentActions.map((action) => `ran ${action.workflowId} at ${action.scheduledAt}`),
      ].join('\n'),
    );
  });

  for (const [name, describe, act] of [
    [
      'pause',
      'pause the schedule',
      async (tenant: string) =>
        (await passModules()).pauseSynthesisSchedule(await context.temporalClient(), tenant, 'paused from the skillsmith CLI'),
    ],
    [
      'resume',
      'resume a paused schedule',
      async (tenant: string) => (await passModules()).resumeSynthesisSchedule(await context.temporalClient(), tenant),
    ],
    [
      'delete',
      'delete the schedule (passes already run are kept)',
      async (tenant: string) => (await passModules()).deleteSynthesisSchedule(await context.temporalClient(), tenant),
    ],
  ] as const) {
    schedule
      .command(name)
      .description(describe)
      .action(async (_options, command: Command) => {
        const { tenant, json } = command.optsWithGlobals<GlobalOptions>();
        const { ScheduleNotFoundError } = await passModules();
        await act(tenant).catch((error: Error) => {
          if (error instanceof ScheduleNotFoundError) throw new Error(`no schedule ${passScheduleId(tenant)}`);
          throw error;
        });
        context.output.result(json, { scheduleId: passScheduleId(tenant), action: name }, () => `${name}: ${passScheduleId(tenant)}`);
      });
  }
}
