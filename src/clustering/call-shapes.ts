/**
 * A procedure's call shape: its steps with the argument names each was called with. Two runs that
 * call the same tools in the same order may still do different jobs — a digest mailed per region
 * and a board note mailed per quarter both search, write and send — and what tells them apart in
 * the calls is what the steps were given: arguments of different names. An optional argument only
 * adds a name (a note given or not), so shapes whose every step's names contain the other's are the
 * same shape; shapes that replace names somewhere are not. Whether such shapes are different jobs
 * is then for the goals to decide (goal-determined-variants.ts), as for different steps.
 */

/** One step of a call shape: the tool, and the argument names it was called with (any order). */
export interface ShapedStep {
  tool: string;
  argumentNames: readonly string[];
}

const contains = (outer: ReadonlySet<string>, inner: ReadonlySet<string>) => [...inner].every((name) => outer.has(name));

/**
 * Whether two shapes of the same tool sequence replace argument names somewhere: a step whose
 * names neither contain nor are contained by the other's. False for different tool sequences
 * (those differ in their steps, not their shapes) and for shapes one of which only adds names.
 */
export function shapesDiffer(a: readonly ShapedStep[], b: readonly ShapedStep[]): boolean {
  if (a.length !== b.length || a.some((step, index) => step.tool !== b[index]!.tool)) return false;
  return a.some((step, index) => {
    const mine = new Set(step.argumentNames);
    const theirs = new Set(b[index]!.argumentNames);
    return !contains(mine, theirs) && !contains(theirs, mine);
  });
}

/**
 * Groups of items (run indices) by call shape: each item joins the first group, largest first,
 * whose shape it does not differ from (shapesDiffer), else starts its own. An optional argument
 * therefore never makes a group of its own.
 */
export function groupByShape<T>(items: readonly T[], shapeOf: (item: T) => readonly ShapedStep[]): T[][] {
  const exact = new Map<string, T[]>();
  for (const item of items) {
    const key = JSON.stringify(shapeOf(item).map((step) => [step.tool, [...step.argumentNames].sort()]));
    exact.set(key, [...(exact.get(key) ?? []), item]);
  }
  const groups: Array<{ shape: readonly ShapedStep[]; members: T[] }> = [];
  for (const members of [...exact.values()].sort((a, b) => b.length - a.length)) {
    const shape = shapeOf(members[0]!);
    const group = groups.find((candidate) => !shapesDiffer(candidate.shape, shape));
    if (group) group.members.push(...members);
    else groups.push({ shape, members: [...members] });
  }
  return groups.map((group) => group.members);
}
