/**
 * The tools that sequences calling the same tools call a different number of times (`a b b` and
 * `a b b b`; `a b a b` and `a b`; `a a b` and `a b b`); null when they call different tools, or
 * each tool as often. The clustering splits such variants when their goals state the counts, and
 * reconcile never lets them compete for one job.
 */
export function toolsRepeatedDifferently(sequences: ReadonlyArray<readonly string[]>): string[] | null {
  const counts = sequences.map((tools) => {
    const byTool = new Map<string, number>();
    for (const tool of tools) byTool.set(tool, (byTool.get(tool) ?? 0) + 1);
    return byTool;
  });
  const tools = [...counts[0]!.keys()].sort();
  if (!counts.every((byTool) => byTool.size === tools.length && tools.every((tool) => byTool.has(tool)))) return null;
  const repeated = tools.filter((tool) => counts.some((byTool) => byTool.get(tool) !== counts[0]!.get(tool)));
  return repeated.length > 0 ? repeated : null;
}
