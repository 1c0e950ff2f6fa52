/**
 * The words of goals and tool names, and which of them are slot values. A slot value is what
 * varies from one run of a procedure to the next (a person, a place, an id, a date, an amount),
 * so a skill's name and description must never contain one. Detected generally, from the runs
 * themselves: any word inside an argument value that is not a constant of the procedure, any word
 * with a digit, and any word the goals write as a proper name (but not one that opens most goals). (Free text passed as an argument — a
 * search query that repeats the goal — is not a slot value; the names and ids inside it are
 * caught by the other rules or by the shorter arguments that carry them.)
 */

const STOP_WORDS = new Set(
  (
    'a about above after again all also am an and any are as at be been before being below between both but by can ' +
    'could did do does doing done down during each either else ever every few for from further get gets got had has ' +
    'have having he her here hers him his how i if in into is it its just let like me mine more most much must my ' +
    'need needs new no nor not now of off on once only or other our ours out over own please same she should so some ' +
    'such than thank thanks that the their theirs them then there these they this those through to too under until ' +
    'up us very want was we were what when where which while who whom why will with would yes yet you your yours ' +
    'today tomorrow yesterday tonight morning evening afternoon week weekend month year day days time one two three ' +
    'go going gone make made see find look give take tell know think ok okay hi hello hey sure right well really ' +
    'near via per api info data'
  ).split(' '),
);

export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(word);
}

/** Lower-case words (letters and digits) of a text, in order. */
export function wordsOf(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** A crude singular, so `hotels` and `hotel` count as one word in names. */
export function stem(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss') && !word.endsWith('us')) return word.slice(0, -1);
  return word;
}

/** The words of a tool name: `Get_Popular_Attraction_Near_By`, `searchHotels`, `ci.logs.fetch`. */
export function toolWords(tool: string): string[] {
  return tool
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^A-Za-z0-9]+/)
    .filter((word) => word.length > 0)
    .map((word) => word.toLowerCase());
}

/** A value of more words than this is free text (a query, a message), not a slot value. */
const FREE_TEXT_WORDS = 5;

/** Words of the slot-like values inside a value of any JSON shape (strings, numbers, nested objects and arrays). */
function valueWords(value: unknown, into: Set<string>): void {
  if (value === null || value === undefined) return;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    const words = wordsOf(String(value));
    if (words.length <= FREE_TEXT_WORDS) for (const word of words) into.add(word);
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) valueWords(item, into);
    return;
  }
  if (typeof value === 'object') for (const item of Object.values(value)) valueWords(item, into);
}

/**
 * Proper names: words written with a capital after the first word of a sentence in some goals
 * but not all, and words no goal ever writes in lower case (a name that opens every sentence it
 * is in — "Aden is going to stay…" — is still a name).
 */
function properNames(goals: string[]): Set<string> {
  // A word that opens most goals is the task's own ("Refund order A-1041 …"), not a value that varies.
  const openers = new Map<string, number>();
  for (const goal of goals) {
    const first = wordsOf(goal)[0];
    if (first !== undefined) openers.set(first, (openers.get(first) ?? 0) + 1);
  }
  const taskWords = new Set(
    [...openers].filter(([, count]) => count >= MIN_RECURRING_RUNS && count * 2 >= goals.length).map(([word]) => word),
  );
  const capitalisedIn = new Map<string, number>();
  const writtenLower = new Set<string>();
  for (const goal of goals) {
    for (const token of goal.match(/[\p{L}\p{N}]+/gu) ?? []) if (!/^\p{Lu}/u.test(token)) writtenLower.add(token.toLowerCase());
    const seen = new Set<string>();
    for (const sentence of goal.split(/[.!?\n]+/)) {
      const tokens = sentence.match(/[\p{L}\p{N}]+/gu) ?? [];
      tokens.forEach((token, index) => {
        if (index > 0 && /^\p{Lu}/u.test(token)) seen.add(token.toLowerCase());
      });
    }
    for (const word of seen) capitalisedIn.set(word, (capitalisedIn.get(word) ?? 0) + 1);
  }
  const names = new Set([...capitalisedIn.entries()].filter(([, count]) => count < goals.length).map(([word]) => word));
  for (const goal of goals) for (const word of wordsOf(goal)) if (!writtenLower.has(word)) names.add(word);
  for (const word of taskWords) names.delete(word);
  return names;
}

export interface SlotVocabulary {
  /** True when the word may be a slot value and so must not name or describe a procedure. */
  isSlotValue(word: string): boolean;
}

/** Runs that must pass the same value before it is a constant of the procedure rather than a slot value that happened to repeat. */
const MIN_RECURRING_RUNS = 3;

/**
 * Arguments of one tool whose value every run that passed them passed the same, in at least
 * MIN_RECURRING_RUNS runs: constants of the procedure (`template: refund-receipt`), whose words
 * are the task's own, not slot values.
 */
function constantArguments(runs: Array<{ toolCalls: Array<{ tool: string; args?: Record<string, unknown> | null }> }>): Set<string> {
  const values = new Map<string, { value: string; runs: number; varies: boolean }>();
  for (const run of runs) {
    const passed = new Map<string, string>();
    for (const call of run.toolCalls)
      for (const [argument, value] of Object.entries(call.args ?? {}))
        passed.set(`${call.tool}\u0000${argument}`, JSON.stringify(value) ?? '');
    for (const [key, value] of passed) {
      const seen = values.get(key);
      if (!seen) values.set(key, { value, runs: 1, varies: false });
      else {
        seen.runs += 1;
        seen.varies ||= seen.value !== value;
      }
    }
  }
  return new Set([...values].filter(([, seen]) => !seen.varies && seen.runs >= MIN_RECURRING_RUNS).map(([key]) => key));
}

export function slotVocabulary(
  runs: Array<{ goal: string; toolCalls: Array<{ tool: string; args?: Record<string, unknown> | null }> }>,
): SlotVocabulary {
  const constants = constantArguments(runs);
  const argumentWords = new Set<string>();
  for (const run of runs)
    for (const call of run.toolCalls)
      for (const [argument, value] of Object.entries(call.args ?? {}))
        if (!constants.has(`${call.tool}\u0000${argument}`)) valueWords(value, argumentWords);
  const names = properNames(runs.map((run) => run.goal));
  return {
    isSlotValue: (word) => /\p{N}/u.test(word) || argumentWords.has(word) || names.has(word),
  };
}

/**
 * The content words (no stop words, no slot values) at least `minShare` of the goals use — 1:
 * every goal — most shared first, then in the order they first appear; `hotels` in one goal and
 * `hotel` in another count as one word.
 */
export function sharedGoalWords(goals: string[], slots: SlotVocabulary, minShare = 1): string[] {
  if (goals.length === 0) return [];
  const stemsPerGoal = goals.map((goal) => new Set(wordsOf(goal).map(stem)));
  const order: string[] = [];
  for (const goal of goals) {
    for (const word of wordsOf(goal)) {
      const root = stem(word);
      if (word.length < 3 || isStopWord(word) || isStopWord(root) || slots.isSlotValue(word) || slots.isSlotValue(root)) continue;
      if (!order.includes(root)) order.push(root);
    }
  }
  return order
    .map((root, first) => ({ root, first, share: stemsPerGoal.filter((stems) => stems.has(root)).length / goals.length }))
    .filter(({ share }) => share >= minShare)
    .sort((a, b) => b.share - a.share || a.first - b.first)
    .map(({ root }) => root);
}
