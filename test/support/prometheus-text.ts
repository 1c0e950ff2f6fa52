/**
 * A reader of the Prometheus text exposition format, for tests that scrape `/metrics`: every
 * sample with its name, labels and value, and the TYPE each metric family declares.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  samples: Sample[];
  types: Map<string, string>;
}

const sampleLine = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const labelPair = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseExposition(text: string): Exposition {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1]!, type[2]!);
    if (line.startsWith('#')) continue;
    const match = sampleLine.exec(line);
    if (!match) throw new Error(`not an exposition line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(labelPair))
      labels[pair[1]!] = pair[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    const raw = match[3]!;
    samples.push({
      name: match[1]!,
      labels,
      value: raw === 'NaN' ? Number.NaN : raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : Number(raw),
    });
  }
  return { samples, types };
}

/** The one sample of `name` whose labels include `labels`; undefined when none; throws when several match. */
export function sampleValue(exposition: Exposition, name: string, labels: Record<string, string> = {}): number | undefined {
  const matches = exposition.samples.filter(
    (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
  if (matches.length > 1) throw new Error(`${matches.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return matches[0]?.value;
}
