import { runReportSchema, type RunReport, type RunReportInput } from './run-report.ts';
import { createSeededRandom, type SeededRandom } from './seeded-random.ts';

/**
 * Deterministic synthetic agent runs for tests, benchmarks and the demo. Each run belongs to a
 * task family (a recurring job such as "deploy a service") with many paraphrased goals, a
 * canonical tool sequence with optional steps and noise, and its own failure rate; a few runs
 * are one-off distractors that belong to no family. Same options → same runs, byte for byte.
 */

type Slots = Readonly<Record<string, readonly string[]>>;
type SlotValues = Readonly<Record<string, string>>;

interface FamilyStep {
  tool: string;
  /** Probability that the step is taken at all (1 = always). */
  probability?: number;
  /** Slot names whose values become the call's args. */
  args?: readonly string[];
  summary: string;
}

export interface TaskFamily {
  id: string;
  /** Goal paraphrases; `{slot}` placeholders are filled from `slots`. */
  goals: readonly string[];
  slots: Slots;
  steps: readonly FamilyStep[];
  /** Share of runs that fail or are cancelled. */
  failureRate: number;
}

const SERVICES = ['billing-api', 'checkout', 'search-indexer', 'auth-gateway', 'notifications', 'media-transcoder', 'ledger', 'recommendations'];
const ENVIRONMENTS = ['staging', 'production', 'qa', 'eu-production', 'canary'];
const REPOSITORIES = ['acme/web', 'acme/mobile', 'acme/platform', 'acme/data-pipeline', 'acme/infra', 'acme/docs-site'];
const PEOPLE = ['Priya Natarajan', 'Tom Becker', 'Ana Souza', 'Kenji Watanabe', 'Fatima Zahra', 'Liam O\'Connor', 'Mei Lin'];

export const TASK_FAMILIES: readonly TaskFamily[] = [
  {
    id: 'deploy-service',
    goals: [
      'deploy {service} to {env}',
      'Deploy the latest {service} build to {env}',
      'ship {service} to {env} please',
      'can you roll out the new version of {service} on {env}?',
      'push the current main of {service} out to {env}',
      'release {service} to the {env} environment',
      'I need {service} deployed on {env} today',
      'roll the {env} deployment of {service} forward to the newest build',
      'get the latest {service} changes live in {env}',
    ],
    slots: { service: SERVICES, env: ENVIRONMENTS },
    steps: [
      { tool: 'repo.clone', args: ['service'], summary: 'cloned repository' },
      { tool: 'build.run', args: ['service'], summary: 'build succeeded' },
      { tool: 'test.run', probability: 0.7, args: ['service'], summary: 'all tests passed' },
      { tool: 'deploy.apply', args: ['service', 'env'], summary: 'deployment created' },
      { tool: 'deploy.status', args: ['service', 'env'], summary: 'rollout complete' },
      { tool: 'notify.slack', probability: 0.5, args: ['service'], summary: 'posted to #deploys' },
    ],
    failureRate: 0.1,
  },
  {
    id: 'triage-ci-failure',
    goals: [
      'figure out why the CI build for {repo} is failing',
      'triage the failing CI pipeline on {repo}',
      'CI is red on {repo} {branch}, find out why',
      'why did the last build of {repo} break?',
      'investigate the broken build on {branch} in {repo}',
      'the {branch} pipeline for {repo} keeps failing — diagnose it',
      'look into the CI failure on {repo} and tell me what broke',
      'debug the red build on {repo}',
    ],
    slots: { repo: REPOSITORIES, branch: ['main', 'release/2.4', 'develop', 'feature/payments'] },
    steps: [
      { tool: 'ci.runs.list', args: ['repo', 'branch'], summary: 'found 3 failed runs' },
      { tool: 'ci.logs.fetch', args: ['repo'], summary: 'fetched 1,204 log lines' },
      { tool: 'repo.clone', probability: 0.6, args: ['repo'], summary: 'cloned repository' },
      { tool: 'test.run', args: ['repo'], summary: 'reproduced failing test' },
      { tool: 'issue.comment', args: ['repo'], summary: 'posted diagnosis' },
    ],
    failureRate: 0.15,
  },
  {
    id: 'rotate-api-key',
    goals: [
      'rotate the {provider} API key used by {service}',
      'our {provider} key for {service} leaked, rotate it now',
      'replace the {provider} credentials that {service} uses',
      'roll the {provider} API token for {service}',
      'issue a new {provider} key for {service} and revoke the old one',
      'time to rotate {service}\'s {provider} secret',
      'swap out the {provider} API key in {service}',
      'cycle the {provider} key {service} authenticates with',
    ],
    slots: { provider: ['Stripe', 'SendGrid', 'Twilio', 'OpenAI', 'Datadog', 'GitHub'], service: SERVICES },
    steps: [
      { tool: 'secrets.get', args: ['service', 'provider'], summary: 'read current key id' },
      { tool: 'provider.keys.create', args: ['provider'], summary: 'created new key' },
      { tool: 'secrets.put', args: ['service', 'provider'], summary: 'stored new key' },
      { tool: 'deploy.restart', args: ['service'], summary: 'restarted pods' },
      { tool: 'provider.keys.revoke', args: ['provider'], summary: 'revoked old key' },
    ],
    failureRate: 0.12,
  },
  {
    id: 'summarise-pr',
    goals: [
      'summarise PR #{pr} in {repo}',
      'give me a summary of pull request {pr} on {repo}',
      'what does PR {pr} in {repo} change?',
      'write a short summary of {repo}#{pr} for the reviewers',
      'TL;DR of pull request #{pr} ({repo})',
      'summarize the changes in {repo} PR {pr}',
      'explain what {repo}#{pr} does',
      'post a summary comment on PR #{pr} of {repo}',
    ],
    slots: { repo: REPOSITORIES, pr: ['118', '2031', '457', '982', '1377', '64', '3310', '745'] },
    steps: [
      { tool: 'vcs.pr.get', args: ['repo', 'pr'], summary: 'fetched PR metadata' },
      { tool: 'vcs.pr.diff', args: ['repo', 'pr'], summary: 'diff: 14 files, +320 -85' },
      { tool: 'vcs.pr.comments.list', probability: 0.6, args: ['repo', 'pr'], summary: '7 review comments' },
      { tool: 'vcs.pr.comment.create', args: ['repo', 'pr'], summary: 'posted summary' },
    ],
    failureRate: 0.05,
  },
  {
    id: 'restore-database',
    goals: [
      'restore the {db} database from last night\'s backup in {env}',
      'roll {db} on {env} back to the latest backup',
      'we corrupted {db} in {env}; restore it from backup',
      'recover the {env} {db} database from a snapshot',
      'bring back yesterday\'s copy of {db} on {env}',
      'restore {db} ({env}) to the most recent good backup',
      'do a point-in-time restore of {db} in {env}',
    ],
    slots: { db: ['orders', 'users', 'inventory', 'analytics', 'payments'], env: ENVIRONMENTS },
    steps: [
      { tool: 'db.backups.list', args: ['db', 'env'], summary: 'found 7 backups' },
      { tool: 'db.snapshot.create', args: ['db', 'env'], summary: 'safety snapshot taken' },
      { tool: 'db.restore', args: ['db', 'env'], summary: 'restore finished' },
      { tool: 'db.query', args: ['db'], summary: 'row counts verified' },
      { tool: 'notify.slack', probability: 0.6, args: ['db'], summary: 'posted to #ops' },
    ],
    failureRate: 0.2,
  },
  {
    id: 'grant-access',
    goals: [
      'give {person} access to {system}',
      'grant {person} {system} permissions',
      'onboard {person} onto {system}',
      '{person} needs access to {system}, please set it up',
      'add {person} to the {system} users',
      'set up a {system} account for {person}',
      'please provision {system} access for {person}',
    ],
    slots: { person: PEOPLE, system: ['Grafana', 'the prod Kubernetes cluster', 'Snowflake', 'Sentry', 'the billing console', 'PagerDuty'] },
    steps: [
      { tool: 'directory.user.get', args: ['person'], summary: 'found user' },
      { tool: 'iam.group.add', args: ['person', 'system'], summary: 'added to group' },
      { tool: 'iam.policy.attach', probability: 0.5, args: ['system'], summary: 'policy attached' },
      { tool: 'email.send', args: ['person'], summary: 'welcome email sent' },
    ],
    failureRate: 0.08,
  },
  {
    id: 'investigate-latency',
    goals: [
      'investigate the latency spike in {service}',
      'why is {service} slow since {time}?',
      'p99 latency on {service} jumped around {time}, find the cause',
      'look into the slowdown of {service}',
      'debug the response-time regression in {service}',
      '{service} is timing out for users since {time} — investigate',
      'find out what made {service} slow at {time}',
      'root-cause the {service} latency alert',
    ],
    slots: { service: SERVICES, time: ['09:00 UTC', 'midnight', 'the last deploy', 'this morning', '14:30'] },
    steps: [
      { tool: 'metrics.query', args: ['service'], summary: 'p99 up 4x' },
      { tool: 'logs.search', args: ['service'], summary: '312 timeout errors' },
      { tool: 'traces.query', probability: 0.7, args: ['service'], summary: 'slow span: db.query' },
      { tool: 'incident.create', args: ['service'], summary: 'incident opened' },
      { tool: 'notify.pagerduty', probability: 0.4, args: ['service'], summary: 'paged owner' },
    ],
    failureRate: 0.25,
  },
  {
    id: 'upgrade-dependency',
    goals: [
      'bump {package} to {version} in {repo}',
      'upgrade {package} to version {version} for {repo}',
      'update the {package} dependency in {repo} to {version}',
      'move {repo} onto {package} {version}',
      'we need {package}@{version} in {repo}, open a PR',
      'raise {package} to {version} across {repo}',
      'upgrade {repo} to the new {package} release ({version})',
    ],
    slots: { package: ['react', 'typescript', 'express', 'lodash', 'zod', 'pg'], version: ['5.9.3', '19.1.0', '4.3.5', '8.23.1', '3.0.0'], repo: REPOSITORIES },
    steps: [
      { tool: 'repo.clone', args: ['repo'], summary: 'cloned repository' },
      { tool: 'deps.update', args: ['package', 'version'], summary: 'lockfile updated' },
      { tool: 'build.run', args: ['repo'], summary: 'build succeeded' },
      { tool: 'test.run', args: ['repo'], summary: 'all tests passed' },
      { tool: 'vcs.pr.create', args: ['repo', 'package'], summary: 'opened PR' },
    ],
    failureRate: 0.4,
  },
  {
    id: 'invoice-report',
    goals: [
      'compile the {month} invoice report for {customer}',
      'put together {customer}\'s invoices for {month}',
      'send {customer} their {month} billing summary',
      'make a spreadsheet of {customer} invoices from {month}',
      'I need the {month} invoice report for {customer}',
      'prepare the monthly invoice sheet for {customer} ({month})',
      'export all {month} invoices for {customer} and email them',
    ],
    slots: { month: ['January', 'February', 'March', 'April', 'May', 'June', 'October'], customer: ['Globex', 'Initech', 'Umbrella Corp', 'Hooli', 'Stark Industries', 'Wayne Enterprises'] },
    steps: [
      { tool: 'billing.invoices.list', args: ['customer', 'month'], summary: '42 invoices' },
      { tool: 'sheets.create', args: ['customer'], summary: 'spreadsheet created' },
      { tool: 'sheets.append', args: ['month'], summary: 'rows appended' },
      { tool: 'email.send', args: ['customer'], summary: 'report emailed' },
    ],
    failureRate: 0.06,
  },
  {
    id: 'translate-docs',
    goals: [
      'translate the {doc} page into {language}',
      'we need a {language} version of the {doc} docs',
      'localise the {doc} guide for {language} readers',
      'produce a {language} translation of {doc}',
      'make the {doc} documentation available in {language}',
      'translate {doc} to {language} and open a PR',
      'port the {doc} page to {language}',
    ],
    slots: { doc: ['getting started', 'billing FAQ', 'API authentication', 'webhooks', 'rate limits', 'SSO setup'], language: ['German', 'Japanese', 'Portuguese', 'French', 'Korean', 'Spanish'] },
    steps: [
      { tool: 'docs.fetch', args: ['doc'], summary: 'fetched page' },
      { tool: 'translate.text', args: ['language'], summary: 'translated 1,850 words' },
      { tool: 'docs.write', args: ['doc', 'language'], summary: 'page written' },
      { tool: 'vcs.pr.create', probability: 0.8, args: ['doc'], summary: 'opened PR' },
    ],
    failureRate: 0.1,
  },
];

/** Tools an agent reaches for off-plan; inserted at random as noise. */
const NOISE_TOOLS: readonly { tool: string; summary: string }[] = [
  { tool: 'web.search', summary: '10 results' },
  { tool: 'notes.write', summary: 'note saved' },
  { tool: 'shell.exec', summary: 'exit 0' },
  { tool: 'memory.recall', summary: '2 memories' },
  { tool: 'fs.read', summary: 'read 2.1 KB' },
];

const DISTRACTOR_GOALS: readonly string[] = [
  'what is the capital of {thing}?',
  'write a haiku about {thing}',
  'convert 37 degrees {thing} to kelvin',
  'recommend a podcast about {thing}',
  'what time is it in {thing} right now',
  'tell me a fun fact about {thing}',
  'draft a birthday message mentioning {thing}',
  'how do you pronounce {thing}?',
];
const DISTRACTOR_THINGS: readonly string[] = ['Mongolia', 'octopuses', 'Fahrenheit', 'jazz', 'Reykjavik', 'sourdough', 'the moon', 'chess', 'Quechua', 'lighthouses', 'Bhutan', 'tardigrades'];
const FAILURE_ERRORS: readonly string[] = ['timeout after 30s', 'permission denied', 'HTTP 503 from upstream', 'resource not found', 'rate limited (429)', 'validation failed'];
const AGENT_IDS: readonly string[] = ['ops-agent', 'dev-agent', 'support-agent', 'data-agent'];

export interface GenerateRunsOptions {
  seed: number;
  runs: number;
  /** Written into every report; when omitted reports get the schema default ("default"). */
  tenantId?: string;
  /** Restrict to these family ids (default: all). */
  families?: readonly string[];
  /** Share of one-off distractor runs (default 0.05). */
  distractorRate?: number;
  /** Timestamp of the first run (default 2026-01-01T00:00:00Z). */
  startAt?: Date;
}

export interface GeneratedRun {
  report: RunReport;
  /** The task family id, or null for a one-off distractor. */
  family: string | null;
}

function fill(template: string, values: SlotValues): string {
  return template.replace(/\{(\w+)\}/g, (match, name: string) => values[name] ?? match);
}

function chooseSlots(random: SeededRandom, slots: Slots): SlotValues {
  const values: Record<string, string> = {};
  for (const [name, options] of Object.entries(slots)) values[name] = random.pick(options);
  return values;
}

interface CallDraft {
  tool: string;
  args: Record<string, string> | undefined;
  summary: string;
}

function familyCalls(random: SeededRandom, family: TaskFamily, values: SlotValues): CallDraft[] {
  const calls: CallDraft[] = [];
  for (const step of family.steps) {
    if (random.chance(0.12)) {
      const noise = random.pick(NOISE_TOOLS);
      calls.push({ tool: noise.tool, args: { query: fill(random.pick(family.goals), values) }, summary: noise.summary });
    }
    if (!random.chance(step.probability ?? 1)) continue;
    const args: Record<string, string> = {};
    for (const name of step.args ?? []) args[name] = values[name] ?? '';
    calls.push({ tool: step.tool, args, summary: step.summary });
  }
  // Now and then two adjacent steps happen in the other order.
  if (calls.length > 2 && random.chance(0.05)) {
    const index = random.integer(0, calls.length - 2);
    [calls[index], calls[index + 1]] = [calls[index + 1] as CallDraft, calls[index] as CallDraft];
  }
  return calls;
}

function distractorCalls(random: SeededRandom, thing: string): CallDraft[] {
  const count = random.integer(0, 3);
  const calls: CallDraft[] = [];
  for (let index = 0; index < count; index += 1) {
    const noise = random.pick(NOISE_TOOLS);
    calls.push({ tool: noise.tool, args: { query: thing }, summary: noise.summary });
  }
  return calls;
}

function pad(value: number, width: number): string {
  return value.toString().padStart(width, '0');
}

/** Yields runs one at a time (constant memory for large benchmark files). */
export function* iterateRuns(options: GenerateRunsOptions): Generator<GeneratedRun> {
  const random = createSeededRandom(options.seed);
  const families = options.families === undefined
    ? TASK_FAMILIES
    : TASK_FAMILIES.filter((family) => options.families?.includes(family.id));
  if (families.length === 0) throw new RangeError(`no task family matches ${JSON.stringify(options.families)}`);
  const distractorRate = options.distractorRate ?? 0.05;
  let clock = (options.startAt ?? new Date('2026-01-01T00:00:00Z')).getTime();

  for (let index = 0; index < options.runs; index += 1) {
    clock += random.integer(5, 600) * 1000;
    const isDistractor = random.chance(distractorRate);
    const family = isDistractor ? null : random.pick(families);
    let goal: string;
    let drafts: CallDraft[];
    if (family === null) {
      const thing = random.pick(DISTRACTOR_THINGS);
      goal = `${fill(random.pick(DISTRACTOR_GOALS), { thing })} (#${index})`;
      drafts = distractorCalls(random, thing);
    } else {
      const values = chooseSlots(random, family.slots);
      goal = fill(random.pick(family.goals), values);
      drafts = familyCalls(random, family, values);
    }

    const failureRate = family?.failureRate ?? 0.1;
    const fails = drafts.length > 0 && random.chance(failureRate);
    const status: RunReport['status'] = fails ? (random.chance(0.2) ? 'cancelled' : 'failed') : 'completed';
    if (fails) drafts = drafts.slice(0, random.integer(1, drafts.length));

    const toolCalls: NonNullable<RunReportInput['toolCalls']> = [];
    let callClock = clock;
    drafts.forEach((draft, position) => {
      const durationMs = random.integer(40, 9000);
      const isLast = position === drafts.length - 1;
      // A transient error that the agent retried successfully.
      if (!fails && random.chance(0.04)) {
        toolCalls.push({ tool: draft.tool, args: draft.args, success: false, error: random.pick(FAILURE_ERRORS), durationMs, at: new Date(callClock).toISOString() });
        callClock += durationMs + 250;
      }
      const success = !(fails && isLast && status === 'failed');
      toolCalls.push({
        tool: draft.tool,
        args: draft.args,
        success,
        ...(success ? { resultSummary: draft.summary } : { error: random.pick(FAILURE_ERRORS) }),
        durationMs,
        at: new Date(callClock).toISOString(),
      });
      callClock += durationMs + random.integer(100, 3000);
    });

    const runId = `run-s${options.seed}-${pad(index, 7)}`;
    const input: RunReportInput = {
      ...(options.tenantId === undefined ? {} : { tenantId: options.tenantId }),
      agentId: random.pick(AGENT_IDS),
      runId,
      ...(random.chance(0.5) ? { sessionId: `session-s${options.seed}-${pad(Math.floor(index / 3), 7)}` } : {}),
      goal,
      status,
      startedAt: new Date(clock).toISOString(),
      completedAt: new Date(Math.max(callClock, clock)).toISOString(),
      ...(random.chance(0.1) ? { originTrust: 'operator' as const } : {}),
      toolCalls,
    };
    yield { report: runReportSchema.parse(input), family: family?.id ?? null };
  }
}

/** All runs at once; use `iterateRuns` for files of many thousands. */
export function generateRuns(options: GenerateRunsOptions): GeneratedRun[] {
  return Array.from(iterateRuns(options));
}
