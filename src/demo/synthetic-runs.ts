import { runReportSchema, type RunReport, type RunReportInput } from '../runs/run-report.ts';
import { createSeededRandom, type SeededRandom } from '../clustering/seeded-random.ts';

/**
 * Deterministic synthetic agent runs for tests, benchmarks and the demo. Each run belongs to a
 * task family (a recurring job such as "deploy a service") with many paraphrased goals, a
 * canonical tool sequence with optional steps and noise, and its own failure rate; a few runs
 * are one-off distractors that belong to no family. Same options → same runs, byte for byte.
 *
 * Two catalogs: `classic` (the default, which the demo's committed sample comes from) and
 * `varied`, closer to real traces: paraphrases that share few words, values a step's result
 * carries that later steps' arguments use, retried failed calls, decoy families whose goals
 * read alike but whose procedures differ, and families whose goals differ but whose procedure
 * is the same. A run's label is its procedure (`GeneratedRun.procedure`): what a learned skill
 * should be, whatever the goal's wording.
 */

type Slots = Readonly<Record<string, readonly string[]>>;
type SlotValues = Readonly<Record<string, string>>;

export interface FamilyStep {
  tool: string;
  /** Probability that the step is taken at all (1 = always). */
  probability?: number;
  /** Slot or produced value names whose values become the call's args. */
  args?: readonly string[];
  /** Slot names passed only in some runs, with the chance of each (optional arguments). */
  optionalArgs?: Readonly<Record<string, number>>;
  /** The result summary; `{name}` placeholders are filled from slot and produced values. */
  summary: string;
  /**
   * Values this step's result carries, fresh per run from a pattern (`#` a digit, `@` a
   * lowercase letter): the summary shows them and later steps' args use them (data flow).
   */
  produces?: Readonly<Record<string, string>>;
}

export interface TaskFamily {
  id: string;
  /** The procedure it follows, its label (default: id); families with different goals may share one. */
  procedure?: string;
  /** Goal paraphrases; `{slot}` placeholders are filled from `slots`. */
  goals: readonly string[];
  slots: Slots;
  steps: readonly FamilyStep[];
  /** Share of runs that fail or are cancelled. */
  failureRate: number;
  /** Chance of an off-plan call before each step (default 0.12). */
  noiseRate?: number;
  /** Chance that a call of a successful run first fails and is retried (default 0.04). */
  retryRate?: number;
}

const SERVICES = [
  'billing-api',
  'checkout',
  'search-indexer',
  'auth-gateway',
  'notifications',
  'media-transcoder',
  'ledger',
  'recommendations',
];
const ENVIRONMENTS = ['staging', 'production', 'qa', 'eu-production', 'canary'];
const REPOSITORIES = ['acme/web', 'acme/mobile', 'acme/platform', 'acme/data-pipeline', 'acme/infra', 'acme/docs-site'];
const PEOPLE = ['Priya Natarajan', 'Tom Becker', 'Ana Souza', 'Kenji Watanabe', 'Fatima Zahra', "Liam O'Connor", 'Mei Lin'];

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
      "time to rotate {service}'s {provider} secret",
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
      "restore the {db} database from last night's backup in {env}",
      'roll {db} on {env} back to the latest backup',
      'we corrupted {db} in {env}; restore it from backup',
      'recover the {env} {db} database from a snapshot',
      "bring back yesterday's copy of {db} on {env}",
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
    slots: {
      person: PEOPLE,
      system: ['Grafana', 'the prod Kubernetes cluster', 'Snowflake', 'Sentry', 'the billing console', 'PagerDuty'],
    },
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
    slots: {
      package: ['react', 'typescript', 'express', 'lodash', 'zod', 'pg'],
      version: ['5.9.3', '19.1.0', '4.3.5', '8.23.1', '3.0.0'],
      repo: REPOSITORIES,
    },
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
      "put together {customer}'s invoices for {month}",
      'send {customer} their {month} billing summary',
      'make a spreadsheet of {customer} invoices from {month}',
      'I need the {month} invoice report for {customer}',
      'prepare the monthly invoice sheet for {customer} ({month})',
      'export all {month} invoices for {customer} and email them',
    ],
    slots: {
      month: ['January', 'February', 'March', 'April', 'May', 'June', 'October'],
      customer: ['Globex', 'Initech', 'Umbrella Corp', 'Hooli', 'Stark Industries', 'Wayne Enterprises'],
    },
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
    slots: {
      doc: ['getting started', 'billing FAQ', 'API authentication', 'webhooks', 'rate limits', 'SSO setup'],
      language: ['German', 'Japanese', 'Portuguese', 'French', 'Korean', 'Spanish'],
    },
    steps: [
      { tool: 'docs.fetch', args: ['doc'], summary: 'fetched page' },
      { tool: 'translate.text', args: ['language'], summary: 'translated 1,850 words' },
      { tool: 'docs.write', args: ['doc', 'language'], summary: 'page written' },
      { tool: 'vcs.pr.create', probability: 0.8, args: ['doc'], summary: 'opened PR' },
    ],
    failureRate: 0.1,
  },
];

const ORDERS = ['A-10492', 'A-22817', 'B-30551', 'B-41876', 'C-50913', 'C-67240', 'D-71358', 'D-88024'];
const CUSTOMERS = ['Dana Whitfield', 'Oskar Lindqvist', 'Amara Okafor', 'Rafael Mendes', 'Yuki Tanaka', 'Chloé Martin'];
const DAYS = ['Monday', 'tomorrow', 'Friday', 'next Tuesday', 'the 14th', 'Thursday afternoon'];
const CITIES = ['Lisbon', 'Denver', 'Osaka', 'Nairobi', 'Toronto', 'Kraków'];
const ALERTS = ['disk-full-db-3', 'cpu-high-api', '5xx-rate-checkout', 'queue-lag-ingest', 'cert-expiry-edge', 'memory-leak-worker'];

const REFUND_STEPS: readonly FamilyStep[] = [
  {
    tool: 'orders.get',
    args: ['order'],
    summary: 'order {order}: delivered, paid with payment {payment_id}',
    produces: { payment_id: 'pay_########' },
  },
  {
    tool: 'payments.refund',
    args: ['payment_id'],
    summary: 'refund {refund_id} issued for {payment_id}',
    produces: { refund_id: 're_@@######' },
  },
  { tool: 'orders.update', args: ['order', 'refund_id'], summary: 'order {order} marked refunded ({refund_id})' },
  { tool: 'email.send', probability: 0.7, args: ['customer', 'refund_id'], summary: 'confirmation sent to {customer}' },
];

const EXPENSE_STEPS: readonly FamilyStep[] = [
  {
    tool: 'receipts.list',
    args: ['city'],
    summary: '{count} receipts for {city}, total {amount} EUR',
    produces: { count: '#', amount: '###.##' },
  },
  { tool: 'expenses.report.create', args: ['city', 'amount'], summary: 'draft report {report_id}', produces: { report_id: 'EXP-####' } },
  { tool: 'expenses.report.attach', probability: 0.6, args: ['report_id'], summary: 'receipts attached to {report_id}' },
  { tool: 'expenses.report.submit', args: ['report_id'], summary: '{report_id} submitted for approval' },
];

/**
 * The varied catalog. Label pairs on purpose: refund-order and damaged-delivery share a
 * procedure (different goals); reship-order reads like refund-order but is another procedure;
 * restart/rollback, book/cancel a room and onboard/offboard are decoy pairs; expense-report and
 * mileage-claim share a procedure.
 */
export const VARIED_TASK_FAMILIES: readonly TaskFamily[] = [
  {
    id: 'refund-order',
    goals: [
      'refund order {order}',
      '{customer} wants their money back for {order}',
      'please reverse the charge on purchase {order}',
      'pay {customer} back, they returned everything from {order}',
      'issue a reimbursement for {order}',
      'the buyer of {order} should get a full credit on their card',
      'undo the payment {customer} made for {order}',
      'credit {customer} the amount of {order}',
    ],
    slots: { order: ORDERS, customer: CUSTOMERS },
    steps: REFUND_STEPS,
    failureRate: 0.08,
    noiseRate: 0.1,
    retryRate: 0.1,
  },
  {
    id: 'damaged-delivery',
    procedure: 'refund-order',
    goals: [
      'the parcel for {order} arrived smashed',
      'package {order} showed up broken, make it right for {customer}',
      '{customer} got a damaged item in {order}',
      'compensate whoever received the crushed delivery {order}',
      'shipment {order} came in pieces — sort it out',
      "a courier dropped {customer}'s box ({order}) and it broke",
    ],
    slots: { order: ORDERS, customer: CUSTOMERS },
    steps: REFUND_STEPS,
    failureRate: 0.08,
    noiseRate: 0.1,
    retryRate: 0.1,
  },
  {
    id: 'reship-order',
    goals: [
      'reship order {order}',
      '{customer} wants a replacement for {order}',
      'send {customer} another one of everything in {order}',
      'please resend the items of purchase {order}',
      'dispatch {order} again, the first one never arrived',
      'ship a fresh copy of {order} to {customer}',
    ],
    slots: { order: ORDERS, customer: CUSTOMERS },
    steps: [
      { tool: 'orders.get', args: ['order'], summary: 'order {order}: item {sku}, lost in transit', produces: { sku: 'SKU-####' } },
      {
        tool: 'inventory.reserve',
        args: ['sku'],
        summary: 'reserved {sku} as {reservation_id}',
        produces: { reservation_id: 'res-######' },
      },
      {
        tool: 'shipments.create',
        args: ['order', 'reservation_id'],
        summary: 'shipment created, tracking {tracking}',
        produces: { tracking: '1Z@@########' },
      },
      { tool: 'email.send', args: ['customer', 'tracking'], summary: 'tracking {tracking} sent to {customer}' },
    ],
    failureRate: 0.1,
    noiseRate: 0.1,
    retryRate: 0.1,
  },
  {
    id: 'restart-service',
    goals: [
      'restart {service} in {env}',
      'bounce the {service} pods on {env}',
      'give {service} ({env}) a fresh start',
      'cycle the processes behind {service} in {env}',
      'kick {service} on {env}, it is stuck',
      '{service} hangs in {env}; turn it off and on again',
    ],
    slots: { service: SERVICES, env: ENVIRONMENTS },
    steps: [
      {
        tool: 'k8s.deployment.get',
        args: ['service', 'env'],
        summary: '{service}: 3/3 ready, replicaset {replicaset}',
        produces: { replicaset: 'rs-@@@@#' },
      },
      { tool: 'k8s.rollout.restart', args: ['service', 'env'], summary: 'restart of {replicaset} triggered' },
      { tool: 'k8s.rollout.status', args: ['service', 'env'], summary: 'rollout complete' },
      { tool: 'notify.slack', probability: 0.5, args: ['service'], summary: 'posted to #ops' },
    ],
    failureRate: 0.1,
    noiseRate: 0.1,
    retryRate: 0.1,
  },
  {
    id: 'rollback-service',
    goals: [
      'roll back {service} in {env}',
      'revert {service} on {env} to the previous release',
      'undo the last deploy of {service} in {env}',
      'put the old version of {service} back on {env}',
      'the new {service} build is broken in {env}, go back one version',
      "{env} needs yesterday's {service} again",
    ],
    slots: { service: SERVICES, env: ENVIRONMENTS },
    steps: [
      {
        tool: 'deploy.history',
        args: ['service', 'env'],
        summary: 'current {current}, previous {previous}',
        produces: { current: 'v2.#.#', previous: 'v2.#.#' },
      },
      { tool: 'deploy.rollback', args: ['service', 'env', 'previous'], summary: 'rolling back to {previous}' },
      { tool: 'deploy.status', args: ['service', 'env'], summary: 'rollback complete' },
      { tool: 'incident.note', probability: 0.5, args: ['service', 'previous'], summary: 'noted on the incident' },
    ],
    failureRate: 0.15,
    noiseRate: 0.1,
    retryRate: 0.1,
  },
  {
    id: 'book-meeting-room',
    goals: [
      'book a room for {count} people on {day}',
      'find me a space to meet with {count} colleagues {day}',
      'reserve a conference room {day} for a group of {count}',
      'I need somewhere for {count} of us to sit down on {day}',
      'get us a meeting room {day}, we are {count}',
      'where can {count} people huddle {day}? grab it',
    ],
    slots: { count: ['4', '6', '8', '12'], day: DAYS },
    steps: [
      {
        tool: 'calendar.rooms.search',
        args: ['count', 'day'],
        summary: 'free: room {room_id} ({count} seats)',
        produces: { room_id: 'room-#@' },
      },
      {
        tool: 'calendar.rooms.book',
        args: ['room_id', 'day'],
        summary: 'booked {room_id} as {booking_id}',
        produces: { booking_id: 'bkg-#####' },
      },
      { tool: 'calendar.invite.send', probability: 0.6, args: ['booking_id'], summary: 'invites sent for {booking_id}' },
    ],
    failureRate: 0.05,
    noiseRate: 0.1,
    retryRate: 0.1,
  },
  {
    id: 'cancel-meeting-room',
    goals: [
      'cancel the room booking for {day}',
      'release the meeting space we had {day}',
      'we no longer need the conference room on {day}',
      'drop my room reservation for {day}',
      'free up the room I booked {day} for {count} people',
      'give back the {day} meeting room',
    ],
    slots: { count: ['4', '6', '8', '12'], day: DAYS },
    steps: [
      {
        tool: 'calendar.bookings.list',
        args: ['day'],
        summary: 'your booking {booking_id} on {day}',
        produces: { booking_id: 'bkg-#####' },
      },
      { tool: 'calendar.bookings.cancel', args: ['booking_id'], summary: '{booking_id} cancelled' },
      { tool: 'calendar.invite.cancel', args: ['booking_id'], summary: 'attendees told' },
    ],
    failureRate: 0.05,
    noiseRate: 0.1,
    retryRate: 0.1,
  },
  {
    id: 'onboard-employee',
    goals: [
      'set up {person}, who starts on {day}',
      'a new hire, {person}, joins us {day} — get them ready',
      'create accounts for our new colleague {person}',
      'prepare a laptop and logins for {person}',
      'welcome {person} aboard: everything they need on day one',
      'onboard {person}',
    ],
    slots: { person: PEOPLE, day: DAYS },
    steps: [
      { tool: 'hr.employee.get', args: ['person'], summary: '{person}: employee {employee_id}', produces: { employee_id: 'E#####' } },
      { tool: 'directory.user.create', args: ['employee_id'], summary: 'account {username} created', produces: { username: '@@@@@#' } },
      { tool: 'iam.group.add', args: ['username'], summary: '{username} added to staff' },
      { tool: 'it.laptop.order', probability: 0.6, args: ['employee_id'], summary: 'laptop ordered for {employee_id}' },
      { tool: 'email.send', args: ['person', 'username'], summary: 'welcome mail sent to {username}' },
    ],
    failureRate: 0.08,
    noiseRate: 0.1,
    retryRate: 0.1,
  },
  {
    id: 'offboard-employee',
    goals: [
      '{person} is leaving on {day}, remove their access',
      'revoke everything for {person}, last day {day}',
      'deactivate the accounts of {person}',
      "close out {person}'s logins",
      'offboard {person}',
      '{person} has left the company; lock them out',
    ],
    slots: { person: PEOPLE, day: DAYS },
    steps: [
      {
        tool: 'hr.employee.get',
        args: ['person'],
        summary: '{person}: employee {employee_id}, leaving',
        produces: { employee_id: 'E#####' },
      },
      { tool: 'directory.user.disable', args: ['employee_id'], summary: 'account of {employee_id} disabled' },
      { tool: 'iam.sessions.revoke', args: ['employee_id'], summary: 'sessions revoked' },
      { tool: 'it.laptop.return', probability: 0.6, args: ['employee_id'], summary: 'return label sent' },
    ],
    failureRate: 0.08,
    noiseRate: 0.1,
    retryRate: 0.1,
  },
  {
    id: 'expense-report',
    goals: [
      'file my expenses for the {city} trip',
      'submit the receipts from {city}',
      'claim back what I spent in {city}',
      'get me reimbursed for travel to {city}',
      'the {city} conference costs need to go to finance',
    ],
    slots: { city: CITIES },
    steps: EXPENSE_STEPS,
    failureRate: 0.1,
    noiseRate: 0.1,
    retryRate: 0.1,
  },
  {
    id: 'mileage-claim',
    procedure: 'expense-report',
    goals: [
      'I drove to {city} for a client visit, claim the mileage',
      'log my car trip to {city} as a business expense',
      'put in for the kilometres to {city} and back',
      'fuel and tolls for the {city} drive — make finance pay',
    ],
    slots: { city: CITIES },
    steps: EXPENSE_STEPS,
    failureRate: 0.1,
    noiseRate: 0.1,
    retryRate: 0.1,
  },
  {
    id: 'triage-alert',
    goals: [
      'what is going on with alert {alert}?',
      '{alert} fired, look into it',
      'investigate the {alert} monitor',
      'why did {alert} go off?',
      'someone please check {alert}, it keeps paging',
      'is {alert} real or noise?',
    ],
    slots: { alert: ALERTS },
    steps: [
      { tool: 'alerts.get', args: ['alert'], summary: '{alert} on host {host}', produces: { host: 'ip-10-#-#-##' } },
      { tool: 'metrics.query', args: ['host'], summary: '{host}: saturation since 40 min' },
      { tool: 'logs.search', args: ['host'], summary: '{host}: 87 errors' },
      { tool: 'incident.create', probability: 0.5, args: ['alert', 'host'], summary: 'incident opened for {host}' },
    ],
    failureRate: 0.2,
    noiseRate: 0.1,
    retryRate: 0.1,
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
const DISTRACTOR_THINGS: readonly string[] = [
  'Mongolia',
  'octopuses',
  'Fahrenheit',
  'jazz',
  'Reykjavik',
  'sourdough',
  'the moon',
  'chess',
  'Quechua',
  'lighthouses',
  'Bhutan',
  'tardigrades',
];
const FAILURE_ERRORS: readonly string[] = [
  'timeout after 30s',
  'permission denied',
  'HTTP 503 from upstream',
  'resource not found',
  'rate limited (429)',
  'validation failed',
];
const AGENT_IDS: readonly string[] = ['ops-agent', 'dev-agent', 'support-agent', 'data-agent'];

export interface GenerateRunsOptions {
  seed: number;
  runs: number;
  /** Which families (default `classic`, the demo sample's), or a catalog of the caller's own. */
  catalog?: 'classic' | 'varied' | readonly TaskFamily[];
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
  /** The family's procedure (its label), or null for a one-off distractor. */
  procedure: string | null;
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

/** A fresh value from a pattern: `#` → a digit, `@` → a lowercase letter. */
function produceValue(random: SeededRandom, pattern: string): string {
  return pattern.replace(/[#@]/g, (mark) =>
    mark === '#' ? String(random.integer(0, 9)) : String.fromCharCode(97 + random.integer(0, 25)),
  );
}

function familyCalls(random: SeededRandom, family: TaskFamily, slotValues: SlotValues): CallDraft[] {
  const calls: CallDraft[] = [];
  const values: Record<string, string> = { ...slotValues };
  for (const step of family.steps) {
    if (random.chance(family.noiseRate ?? 0.12)) {
      const noise = random.pick(NOISE_TOOLS);
      calls.push({ tool: noise.tool, args: { query: fill(random.pick(family.goals), values) }, summary: noise.summary });
    }
    if (!random.chance(step.probability ?? 1)) continue;
    const args: Record<string, string> = {};
    for (const name of step.args ?? []) args[name] = values[name] ?? '';
    for (const [name, chance] of Object.entries(step.optionalArgs ?? {})) if (random.chance(chance)) args[name] = values[name] ?? '';
    for (const [name, pattern] of Object.entries(step.produces ?? {})) values[name] = produceValue(random, pattern);
    calls.push({ tool: step.tool, args, summary: fill(step.summary, values) });
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
  const catalog =
    options.catalog === 'varied'
      ? VARIED_TASK_FAMILIES
      : options.catalog === 'classic' || options.catalog === undefined
        ? TASK_FAMILIES
        : options.catalog;
  const families = options.families === undefined ? catalog : catalog.filter((family) => options.families?.includes(family.id));
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
      if (!fails && random.chance(family?.retryRate ?? 0.04)) {
        toolCalls.push({
          tool: draft.tool,
          args: draft.args,
          success: false,
          error: random.pick(FAILURE_ERRORS),
          durationMs,
          at: new Date(callClock).toISOString(),
        });
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
    yield { report: runReportSchema.parse(input), family: family?.id ?? null, procedure: family ? (family.procedure ?? family.id) : null };
  }
}

/** All runs at once; use `iterateRuns` for files of many thousands. */
export function generateRuns(options: GenerateRunsOptions): GeneratedRun[] {
  return Array.from(iterateRuns(options));
}
