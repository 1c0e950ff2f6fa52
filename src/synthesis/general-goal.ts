import { isStopWord, stem, wordsOf } from './goal-words.ts';
import type { ProcedureParameter } from './parameter-induction.ts';

/**
 * A cluster's most typical goal in general terms, as plain words an agent chooses a skill by:
 * each parameter written as what it means ("Translate the {doc} page into {language}" → "Translate
 * the doc page into a language"), and every other slot value left out with the words that only
 * introduced it ("Refund order {order_id} for … ({reason})" → "Refund order"). No `{placeholder}`,
 * no "…" is left. Written for any corpus: it reads only the template's punctuation, articles and
 * prepositions, and the parameters' meanings.
 */

const ARTICLE_BEFORE = /(?:^|\s)(?:a|an|the|my|our|your|their|his|her|its|this|that|these|those|each|every|any|some|all|new|old|same)\s*$/i;
const PREPOSITIONS = 'for|from|to|with|by|since|at|on|in|into|of|about|near|via|between|after|before|until|under|over|per|as';
const PLACEHOLDER = /\{([A-Za-z0-9_]+)\}/;

const article = (noun: string) => (/^[aeiou]/i.test(noun) ? `an ${noun}` : `a ${noun}`);

/** The meaning as a noun phrase of plain words ("order id"), or null when it has none. */
function meaningOf(name: string, meanings: ReadonlyMap<string, string>): string | null {
  const words = wordsOf(meanings.get(name) ?? name.replace(/_/g, ' ')).filter((word) => /^\p{L}+$/u.test(word));
  return words.length > 0 ? words.join(' ') : null;
}

/** Words a goal can open with that are not its verb: articles, pronouns, question words, auxiliaries, greetings. */
const NOT_VERBS = new Set(
  (
    'a an the this that these those my our your their his her its i we you he she they it me us them what why how when ' +
    'where who whom which whose is are was were am be been being do does did can could would should will shall may might ' +
    'must has have had there here please kindly hi hello hey ok okay if as while so and or but then now just also'
  ).split(' '),
);

const wordBefore = (text: string) => /(\p{L}+)\W*$/u.exec(text)?.[1]?.toLowerCase();

/**
 * The ways English wraps a request around its verb, at the start of a goal: a greeting, a polite
 * or question-shaped ask, a need or a turn ("Can you please refund …?", "hey, refund …", "time to
 * refund …", "we have to refund …", "I need you to refund …", "go ahead and refund …", "next up:
 * refund …"), and a request passed on ("a request from …: they want us to refund …").
 */
const LEAD_INS = [
  /^(?:hey|hi|hello|ok|okay)\b[\s,!:]*/iu,
  /^(?:can|could|would|will) (?:you|somebody|someone|anyone|we)\s+/iu,
  /^(?:please|kindly)\b[\s,]*/iu,
  /^(?:it'?s |now'?s )?(?:time|high time) to\s+/iu,
  /^(?:we|i) (?:have|need|want|got|ought) to\s+/iu,
  /^(?:i|we) (?:need|want|would like|'d like) (?:you|somebody|someone) to\s+/iu,
  /^go ahead and\s+/iu,
  /^next(?: up)?\s*:\s*/iu,
];
const PASSED_ON = /^[^,;:.!?]{0,60}?\b(?:they|he|she|who)(?: (?:want|wants|need|needs|asked|asks|would like)) (?:us|you|me) to\s+/iu;

/** What follows a request only to soften or time it ("… when you get a chance", "… asap, thanks"). */
const TRAILERS =
  /(?:[\s,]+(?:when(?:ever)? you (?:get a chance|can|have a (?:minute|moment|sec(?:ond)?))|if you can|asap|as soon as possible|please|thanks|thank you))+[.!]*$/iu;

/** A goal without the words it wraps its request in; the goal itself when nothing wraps it. */
export function requestItself(goal: string): string {
  let text = goal.replace(TRAILERS, '');
  for (let stripped = true; stripped;) {
    stripped = false;
    for (const leadIn of [...LEAD_INS, PASSED_ON]) {
      const match = leadIn.exec(text);
      if (match && match[0].length < text.length) {
        text = text.slice(match[0].length).replace(/\?$/, '');
        stripped = true;
      }
    }
  }
  return text;
}

export function generalGoal(template: string, parameters: readonly ProcedureParameter[]): string {
  const meanings = new Map(parameters.map((parameter) => [parameter.name, parameter.meaning]));
  let text = template
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/#(?=\{)/g, '');
  text = requestItself(text);
  const opener = wordsOf(text)[0];
  // A parameter right after the word that names it says nothing more: "order {order_id}" → "order"
  // ("an order" straight after the verb).
  text = text.replace(/(\p{L}+)\s+\{([A-Za-z0-9_]+)\}/gu, (whole, word: string, name: string, offset: number, all: string) => {
    const meaning = meaningOf(name, meanings);
    if (!meaning || !wordsOf(meaning).map(stem).includes(stem(word.toLowerCase()))) return whole;
    return /^\p{L}+\s+$/u.test(all.slice(0, offset)) ? article(word) : word;
  });
  // A bracketed aside of slot values only ("({reason})", "(…, …)") goes.
  text = text.replace(/\s*\((?:\s*(?:\{[A-Za-z0-9_]+\}|…)[\s,;/&+-]*)+\)/g, '');
  // A slot value nobody passed as an argument goes with the preposition that introduced it.
  text = text.replace(new RegExp(`\\s*\\b(?:${PREPOSITIONS})\\s+…`, 'giu'), '').replace(/\s*…/g, '');
  // Every other parameter by its meaning: bare after an article or a word that qualifies it ("the
  // {doc} page", "latest {service} build"), or before the noun it qualifies ("of {customer}
  // invoices from"); else with an article ("restore {db}", "into {language}", "why is {service} slow").
  const preposition = new RegExp(`^(?:${PREPOSITIONS})$`);
  for (let match = PLACEHOLDER.exec(text); match; match = PLACEHOLDER.exec(text)) {
    const before = text.slice(0, match.index);
    const after = text.slice(match.index + match[0].length);
    const meaning = meaningOf(match[1]!, meanings);
    const previous = wordBefore(before);
    const qualifier = previous !== undefined && previous !== opener && !isStopWord(previous) && !preposition.test(previous);
    const next = /^\s+(\p{Ll}+)\s+\p{L}/u.exec(after)?.[1];
    const qualifies = next !== undefined && !isStopWord(next) && !preposition.test(next) && !/^(?:and|or)$/.test(next);
    const bare = ARTICLE_BEFORE.test(before) || qualifier || qualifies;
    text = `${before}${meaning === null ? '' : bare ? meaning : article(meaning)}${after}`;
  }
  return text
    .replace(/\(\s*\)/g, '')
    .replace(/\s+([,.;:!?)])/g, '$1')
    .replace(/([,;:])(?=[,.;:!?])/g, '')
    .replace(/\s{2,}/g, ' ')
    .replace(/^[\s,;:.-]+|[\s,;:-]+$/g, '')
    .trim();
}

/** True when the general goal opens with a word that can be its verb: not an article, a pronoun, a question word or an auxiliary. */
export function opensWithVerb(goal: string): boolean {
  const first = wordsOf(goal)[0];
  return first !== undefined && /^\p{L}{2,}$/u.test(first) && !NOT_VERBS.has(first);
}
