import { createSeededRandom } from '../clustering/seeded-random.ts';
import { generateRuns, type FamilyStep, type GeneratedRun, type TaskFamily } from './synthetic-runs.ts';

/**
 * A catalog of many small task families whose goals are written by different "authors": each
 * goal picks an author's sentence shape, one of several synonyms for the task's verb and one for
 * its object, so two goals of one procedure share few words — the way people and agents phrase
 * the same job. What it holds, on purpose (issue #29):
 * - procedures of 4–5 steps whose last steps no other task calls (distinctive);
 * - neighbouring tasks: every object's tasks share a 2-step prefix (open the system, look the
 *   object up) and then differ, and their goals name the same object;
 * - tasks with the same common procedure (search, write, send) but different purposes;
 * - families of 3–5 runs, some of only 1–2 (not recurring: recall should give them nothing);
 * - optional steps and arguments, data flow from a looked-up id, failed runs (most jobs
 *   reliable, one in seven flaky).
 * A run's label is its family. Nothing here is tuned to a learning rule: the shapes are
 * generic English, and the numbers are drawn from the seed.
 */

interface TaskObject {
  system: string;
  key: string;
  nouns: readonly string[];
  slot: string;
  values: readonly string[];
}

interface TaskAction {
  key: string;
  verbs: readonly string[];
  /** The action's own steps after the object's prefix, as tool suffixes under `<system>.<object>`. */
  steps: readonly string[];
}

const COMPANIES = [
  'Acme Corp',
  'Globex',
  'Initech',
  'Umbrella Health',
  'Stark Logistics',
  'Wayne Foods',
  'Hooli',
  'Vandelay Imports',
  'Soylent Labs',
  'Tyrell Systems',
];
const PEOPLE = [
  'Priya Natarajan',
  'Tom Becker',
  'Ana Souza',
  'Kenji Watanabe',
  'Fatima Zahra',
  'Liam Walsh',
  'Mei Lin',
  'Jonas Berg',
  'Aisha Khan',
];
const SERVICES = ['billing-api', 'checkout', 'search-indexer', 'auth-gateway', 'notifications', 'ledger', 'media-transcoder'];

const OBJECTS: readonly TaskObject[] = [
  { system: 'billing', key: 'invoice', nouns: ['invoice', 'bill', 'statement'], slot: 'customer', values: COMPANIES },
  { system: 'crm', key: 'deal', nouns: ['deal', 'sales opportunity', 'pipeline lead'], slot: 'customer', values: COMPANIES },
  { system: 'hr', key: 'contract', nouns: ['employment contract', 'work agreement', 'job contract'], slot: 'person', values: PEOPLE },
  {
    system: 'dns',
    key: 'zone',
    nouns: ['DNS zone', 'domain records', 'zone file'],
    slot: 'domain',
    values: ['acme.io', 'globex.net', 'initech.dev', 'hooli.app', 'tyrell.ai', 'stark.co'],
  },
  { system: 'vault', key: 'secret', nouns: ['secret', 'credential', 'stored password'], slot: 'service', values: SERVICES },
  {
    system: 'storage',
    key: 'bucket',
    nouns: ['bucket', 'storage container', 'blob store'],
    slot: 'bucket',
    values: ['raw-events', 'ml-artifacts', 'user-uploads', 'backups-eu', 'logs-archive', 'media-cdn'],
  },
  {
    system: 'helpdesk',
    key: 'ticket',
    nouns: ['support ticket', 'customer case', 'help desk request'],
    slot: 'ticket',
    values: ['#4821', '#5530', '#6102', '#7719', '#8043', '#9265'],
  },
  {
    system: 'cms',
    key: 'article',
    nouns: ['article', 'blog post', 'knowledge base page'],
    slot: 'title',
    values: ['"Getting started"', '"Pricing FAQ"', '"Release notes 4.2"', '"Security overview"', '"API limits"'],
  },
  {
    system: 'logistics',
    key: 'shipment',
    nouns: ['shipment', 'parcel', 'delivery'],
    slot: 'tracking',
    values: ['1Z999AA1', 'JD0146000', 'RR4471PL', 'CX9920DE', 'LP00318US', 'TT5521FR'],
  },
  {
    system: 'procurement',
    key: 'order',
    nouns: ['purchase order', 'PO', 'supplier order'],
    slot: 'supplier',
    values: ['Vandelay Imports', 'Dunder Paper', 'Cyberdyne Parts', 'Gringotts Office', 'Oceanic Freight'],
  },
  {
    system: 'ads',
    key: 'campaign',
    nouns: ['ad campaign', 'marketing campaign', 'promotion'],
    slot: 'campaign',
    values: ['Spring Sale', 'Back to School', 'Black Friday', 'Summer Launch', 'Holiday Promo'],
  },
  { system: 'identity', key: 'account', nouns: ['user account', 'login', 'profile'], slot: 'person', values: PEOPLE },
  {
    system: 'ci',
    key: 'pipeline',
    nouns: ['pipeline', 'build job', 'CI workflow'],
    slot: 'repo',
    values: ['acme/web', 'acme/mobile', 'acme/platform', 'acme/data', 'acme/infra'],
  },
  {
    system: 'analytics',
    key: 'dashboard',
    nouns: ['dashboard', 'report board', 'metrics view'],
    slot: 'team',
    values: ['growth', 'finance', 'support', 'platform', 'sales'],
  },
  {
    system: 'legal',
    key: 'nda',
    nouns: ['NDA', 'non-disclosure agreement', 'confidentiality agreement'],
    slot: 'customer',
    values: COMPANIES,
  },
  {
    system: 'fleet',
    key: 'vehicle',
    nouns: ['vehicle', 'company car', 'van'],
    slot: 'plate',
    values: ['KA-4471', 'B-MX 220', 'LX19 ZZT', 'HH-AB 93', 'W-7731'],
  },
  {
    system: 'licensing',
    key: 'license',
    nouns: ['software license', 'seat', 'subscription'],
    slot: 'product',
    values: ['Figma', 'JetBrains', 'Slack', 'Zoom', 'Tableau', 'Adobe CC'],
  },
  {
    system: 'events',
    key: 'booking',
    nouns: ['venue booking', 'event reservation', 'hall booking'],
    slot: 'event',
    values: ['the offsite', 'the town hall', 'the hackathon', 'the partner summit', 'the holiday party'],
  },
  { system: 'payroll', key: 'payslip', nouns: ['payslip', 'pay stub', 'salary statement'], slot: 'person', values: PEOPLE },
  {
    system: 'data',
    key: 'dataset',
    nouns: ['dataset', 'data table', 'training set'],
    slot: 'dataset',
    values: ['churn_2026', 'clickstream', 'orders_eu', 'fraud_labels', 'nps_survey'],
  },
];

const ACTIONS: readonly TaskAction[] = [
  { key: 'archive', verbs: ['archive', 'shelve', 'file away', 'retire'], steps: ['snapshot', 'archive'] },
  { key: 'delete', verbs: ['delete', 'remove', 'purge', 'get rid of', 'wipe'], steps: ['dependents.check', 'delete', 'tombstone'] },
  { key: 'approve', verbs: ['approve', 'sign off on', 'green-light', 'okay'], steps: ['policy.check', 'approve', 'audit.record'] },
  {
    key: 'escalate',
    verbs: ['escalate', 'bump up', 'raise the priority of', 'flag to management'],
    steps: ['priority.set', 'escalate', 'owner.page'],
  },
  { key: 'transfer', verbs: ['transfer', 'hand over', 'reassign', 'move'], steps: ['owner.lookup', 'transfer', 'acl.update'] },
  { key: 'duplicate', verbs: ['clone', 'duplicate', 'copy', 'make a copy of'], steps: ['export', 'import'] },
  { key: 'audit', verbs: ['audit', 'review', 'inspect', 'check over'], steps: ['history.fetch', 'diff', 'report.write'] },
  { key: 'restore', verbs: ['restore', 'bring back', 'recover', 'undelete'], steps: ['versions.list', 'restore'] },
  { key: 'lock', verbs: ['lock', 'freeze', 'suspend', 'block'], steps: ['lock', 'owner.notify'] },
  { key: 'renew', verbs: ['renew', 'extend', 'prolong', 'roll over'], steps: ['expiry.get', 'renew', 'receipt.send'] },
  { key: 'export', verbs: ['export', 'download', 'pull out', 'dump'], steps: ['export', 'share.link'] },
  { key: 'merge', verbs: ['merge', 'combine', 'consolidate', 'fold together'], steps: ['match', 'merge', 'dedupe'] },
];

/** Authors' sentence shapes: {verb} and {noun} are the task's words, {value} the object's slot (filled per run). */
const AUTHORS: readonly string[] = [
  '{verb} the {noun} for {value}',
  "can you {verb} {value}'s {noun}?",
  'please {verb} the {noun} of {value}',
  '{value}: {verb} their {noun}',
  'I need you to {verb} the {noun} for {value} asap',
  'we have to {verb} {value} {noun} today',
  'time to {verb} the {noun} ({value})',
  'hey, {verb} that {noun} on {value} when you get a chance',
  "go ahead and {verb} {value}'s {noun}",
  'request from {value} — they want us to {verb} the {noun}',
  'could somebody {verb} the {value} {noun}',
  'next up: {verb} {noun} / {value}',
];

/** Tasks done with tools every team has: the procedure says little, the goal says which job it is. */
const COMMON_PURPOSES: ReadonlyArray<{
  key: string;
  steps: readonly string[];
  goals: readonly string[];
  slot: string;
  values: readonly string[];
}> = [
  {
    key: 'weekly-newsletter',
    steps: ['docs.search', 'docs.write', 'email.send'],
    goals: [
      'put together the weekly newsletter for {region} and mail it out',
      "send {region} subscribers this week's product digest",
      'compile the weekly update email for the {region} mailing list',
      'write up this week’s newsletter and send it to {region} readers',
    ],
    slot: 'region',
    values: ['EMEA', 'US', 'APAC', 'LATAM'],
  },
  {
    key: 'board-update',
    steps: ['docs.search', 'docs.write', 'email.send'],
    goals: [
      'email the board our {period} results',
      'send the directors a summary of {period} performance',
      'write the investors a note on how {period} went',
      'brief the board by mail on {period} numbers',
    ],
    slot: 'period',
    values: ['Q1', 'Q2', 'Q3', 'Q4', 'first-half', 'annual'],
  },
  {
    key: 'outage-notice',
    steps: ['docs.search', 'docs.write', 'email.send'],
    goals: [
      'tell customers about the {service} outage',
      'let users know {service} was down this morning',
      'send an incident notice about {service} downtime',
      'notify affected clients that {service} had an interruption',
    ],
    slot: 'service',
    values: SERVICES,
  },
  {
    key: 'competitor-brief',
    steps: ['web.search', 'web.fetch', 'chat.post'],
    goals: [
      'find out what {company} launched this week and post it in the channel',
      'share a quick brief on {company} news with the team chat',
      'what is {company} up to lately? summarise it for the team',
      'dig up recent announcements from {company} and drop them in chat',
    ],
    slot: 'company',
    values: COMPANIES,
  },
  {
    key: 'storm-warning',
    steps: ['web.search', 'web.fetch', 'chat.post'],
    goals: [
      'check the storm forecast for {city} and warn the field crew in chat',
      'is severe weather coming to {city}? alert the drivers channel',
      'look up weather warnings near {city} and tell the site team',
      'post a heads-up to the crew if a storm is heading for {city}',
    ],
    slot: 'city',
    values: ['Denver', 'Osaka', 'Nairobi', 'Toronto', 'Lisbon', 'Houston'],
  },
  {
    key: 'price-check',
    steps: ['web.search', 'web.fetch', 'chat.post'],
    goals: [
      "look up {product}'s current list prices and share them in the sales channel",
      'how much does {product} charge now? post it for the reps',
      'get the latest {product} pricing page numbers into the deals chat',
      'compare what {product} is asking these days and tell sales',
    ],
    slot: 'product',
    values: ['Figma', 'Tableau', 'Zoom', 'Slack', 'Datadog'],
  },
];

/** Every author's shape with every verb and noun of one task: its goal templates, `{value}` left as the slot. */
function authoredGoals(verbs: readonly string[], nouns: readonly string[]): string[] {
  return AUTHORS.flatMap((shape) =>
    verbs.flatMap((verb) => nouns.map((noun) => shape.replaceAll('{verb}', verb).replaceAll('{noun}', noun))),
  );
}

/** The families: each object with three actions, and the common-tool purposes. */
export function authoredFamilies(): TaskFamily[] {
  const families: TaskFamily[] = [];
  OBJECTS.forEach((object, index) => {
    const id = `${object.key}_id`;
    const prefix: FamilyStep[] = [
      { tool: `${object.system}.session.open`, summary: `${object.system} session opened` },
      {
        tool: `${object.system}.${object.key}.get`,
        args: [object.slot],
        summary: `${object.key} {${id}} for {${object.slot}}`,
        produces: { [id]: `${object.key.slice(0, 3).toUpperCase()}-#####` },
      },
    ];
    for (let offset = 0; offset < 3; offset++) {
      const action = ACTIONS[(index * 5 + offset * 4) % ACTIONS.length]!;
      const tail: FamilyStep[] = action.steps.map((suffix, position) => ({
        tool: `${object.system}.${object.key}.${suffix}`,
        args: [id],
        ...(position === 0 ? { optionalArgs: { note: 0.3 } } : {}),
        summary: `${suffix} done for {${id}}`,
      }));
      families.push({
        id: `${object.key}-${action.key}`,
        goals: authoredGoals(action.verbs, object.nouns).map((goal) => goal.replaceAll('{value}', `{${object.slot}}`)),
        slots: { [object.slot]: object.values, note: ['urgent', 'per legal', 'customer asked', 'end of quarter'] },
        steps: [...prefix, ...tail, { tool: 'chat.post', probability: 0.3, args: [object.slot], summary: 'posted in the team channel' }],
        // Most jobs are reliable; one in seven is flaky (too unreliable to learn, by the success-rate gate).
        failureRate: (index + offset) % 7 === 0 ? 0.35 : 0.05,
        noiseRate: 0.08,
      });
    }
  });
  for (const purpose of COMMON_PURPOSES) {
    families.push({
      id: purpose.key,
      goals: purpose.goals,
      slots: { [purpose.slot]: purpose.values },
      steps: purpose.steps.map((tool) => ({ tool, args: [purpose.slot], summary: `${tool} ok` })),
      failureRate: 0.1,
      noiseRate: 0.05,
    });
  }
  return families;
}

export interface AuthoredCorpus {
  runs: GeneratedRun[];
  /** Held-out goals per family, fresh wordings no run has: their family's label. */
  heldout: Array<{ goal: string; family: string }>;
}

/**
 * The runs: 3–5 per family, one family in six with only 1–2 (not recurring), plus one-off
 * distractors; two held-out goals per family. Same seed → same corpus.
 */
export function generateAuthoredCorpus(options: { seed: number; heldoutPerFamily?: number }): AuthoredCorpus {
  const random = createSeededRandom(options.seed);
  const families = authoredFamilies();
  const runs: GeneratedRun[] = [];
  families.forEach((family, index) => {
    const count = random.chance(1 / 6) ? random.integer(1, 2) : random.integer(3, 5);
    const startAt = new Date(Date.UTC(2026, 0, 1) + index * 3_600_000);
    runs.push(
      ...generateRuns({
        seed: options.seed * 1000 + index,
        runs: count,
        catalog: families,
        families: [family.id],
        distractorRate: 0,
        startAt,
      }),
    );
  });
  runs.push(...generateRuns({ seed: options.seed * 1000 + families.length, runs: 20, catalog: families, distractorRate: 1 }));
  const known = new Set(runs.map((run) => run.report.goal));
  const heldout: AuthoredCorpus['heldout'] = [];
  families.forEach((family, index) => {
    const fresh = new Set<string>();
    for (const run of generateRuns({
      seed: options.seed * 1000 + 500 + index,
      runs: 40,
      catalog: families,
      families: [family.id],
      distractorRate: 0,
    })) {
      if (!known.has(run.report.goal)) fresh.add(run.report.goal);
      if (fresh.size === (options.heldoutPerFamily ?? 2)) break;
    }
    heldout.push(...[...fresh].map((goal) => ({ goal, family: family.id })));
  });
  return { runs, heldout };
}
