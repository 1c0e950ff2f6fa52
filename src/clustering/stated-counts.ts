/**
 * How many of a call's subjects a goal asks for: "compare the policies of these two hotels", "find
 * three pet-friendly hotels" — a number (a word up to twenty, or a numeral) followed, at most two
 * words later, by a word naming what the call is about: a word of its tool's name or of its argument
 * names (`Get_Hotel_Policies(hotel_id)` is about hotels and policies). When every run of a loop
 * states its own count this way, the goal decides how many times the step repeats, as it decides
 * which tools a run calls (goal-determined-variants.ts). English number words only.
 */

const numberWords: ReadonlyMap<string, number> = new Map(
  'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty'
    .split(' ')
    .map((word, index) => [word, index + 1]),
);

/** Words of identifiers that name an action or join words, not what a call is about. */
const notSubjects = new Set(
  'get set list search find fetch create update delete add remove check and the for with from by of to id ids'.split(' '),
);

/** Words this many apart at most: "two accessible hotels", "three pet-friendly hotels". */
const MAX_WORDS_BETWEEN = 2;

/** The singular of an English noun, for matching "hotels" with `hotel_id` and "policies" with `Get_Hotel_Policies`. */
function singular(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (/(?:s|x|ch|sh)es$/.test(word)) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

/** The lower-case words of an identifier: `Get_Hotel_Policies` → get, hotel, policies; `hotelId` → hotel, id. */
function identifierWords(identifier: string): string[] {
  return identifier
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z]+/)
    .filter((word) => word.length > 0);
}

/** What a call is about: the nouns of its tool's name and its argument names, singular. */
export function callSubjects(tool: string, argumentNames: Iterable<string>): Set<string> {
  const words = [tool, ...argumentNames].flatMap(identifierWords);
  return new Set(words.filter((word) => word.length >= 3 && !notSubjects.has(word)).map(singular));
}

/** The counts the goal states of any of these subjects (singular nouns, as callSubjects gives them). */
export function statedCounts(goal: string, subjects: ReadonlySet<string>): Set<number> {
  const words = goal
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0);
  const counts = new Set<number>();
  words.forEach((word, index) => {
    const count = numberWords.get(word) ?? (/^\d{1,2}$/.test(word) ? Number(word) : undefined);
    if (count === undefined) return;
    for (let next = index + 1; next <= index + 1 + MAX_WORDS_BETWEEN && next < words.length; next++) {
      if (subjects.has(singular(words[next]!))) {
        counts.add(count);
        return;
      }
    }
  });
  return counts;
}
