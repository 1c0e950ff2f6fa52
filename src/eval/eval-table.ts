import type { EvalReport } from './run-eval.ts';

/** The human form of an eval report: one aligned table of figures, then the details that explain them. */

const percent = (value: number) => `${(value * 100).toFixed(1)} %`;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const between = ({ lower, upper }: { lower: number; upper: number }, show: (value: number) => string) => `[${show(lower)}, ${show(upper)}]`;

/** The `--paired` rows: an offline estimate, so its label says so. */
function pairedRows(paired: NonNullable<EvalReport['paired']>): Array<[string, string]> {
  const { goals, recalled, stepReduction, matchRate, check } = paired;
  const rateOf = ({ matched, rate, interval }: (typeof matchRate)['withRecall']) =>
    `${matched} / ${goals} = ${percent(rate)}${interval ? ` ${between(interval, percent)}` : ''}`;
  return [
    ['paired (offline): goals / recalled', `${goals} / ${recalled}`],
    [
      'paired: tool steps saved per goal (95 %)',
      `${stepReduction.mean.toFixed(2)} ${between(stepReduction.interval, (value) => value.toFixed(2))}`,
    ],
    ['paired: gold sequence without recall', rateOf(matchRate.withoutRecall)],
    ['paired: gold sequence with recall', rateOf(matchRate.withRecall)],
    [
      'paired: rollout check (n, b, c)',
      `${check.passed ? 'passes' : 'fails'}: ${check.n}, ${check.b}, ${check.c}, improvement ${percent(check.improvement)} ${between(check.interval, percent)}`,
    ],
  ];
}

export function formatEvalReport(report: EvalReport): string {
  const { corpus, clusters, skills, familyRecall, heldout, inSample, timings } = report;
  const rows: Array<[string, string]> = [
    ['runs / labelled families / unlabelled runs', `${corpus.runs} / ${corpus.labelledFamilies} / ${corpus.unlabelledRuns}`],
    ['recurring families (≥ 3 runs of ≥ 3 steps)', String(corpus.recurringFamilies)],
    ['passes (converged)', `${report.passes.length} (${report.converged ? 'yes' : 'no'})`],
    ['clusters ≥ 2 runs / runs in them', `${clusters.clusters} / ${clusters.clusteredRuns}`],
    ['cluster purity (all / qualifying)', `${percent(clusters.purity)} / ${percent(clusters.qualifying.purity)}`],
    ['live skills (of all procedures)', `${skills.live} (${skills.total})`],
    ['family recall (one clean skill)', `${familyRecall.recalled} / ${familyRecall.recurring} = ${percent(familyRecall.rate)}`],
    ['live skills mixing families', String(skills.mixing)],
    ['families with > 1 live skill', String(skills.familiesWithSeveralSkills)],
    [
      'held-out recall top-1 / top-2',
      heldout
        ? `${heldout.top1} / ${heldout.top2} of ${heldout.positives} = ${percent(heldout.top1Rate)} / ${percent(heldout.top2Rate)}`
        : '–',
    ],
    ['held-out goals answered at all', heldout ? `${heldout.answered} / ${heldout.positives}` : '–'],
    [
      'held-out goals given a wrong skill (family without one)',
      heldout ? `${heldout.wrongSkill} / ${heldout.positives} = ${percent(heldout.wrongSkillRate)} (${heldout.wrongSkillUncovered})` : '–',
    ],
    [
      'false positives on negatives',
      heldout ? `${heldout.falsePositives} / ${heldout.negatives} = ${percent(heldout.falsePositiveRate)}` : '–',
    ],
    [
      'held-out top-1 / top-2 where the family has a skill',
      heldout
        ? `${heldout.top1} / ${heldout.top2} of ${heldout.covered} = ${percent(heldout.top1CoveredRate)} / ${percent(heldout.top2CoveredRate)}`
        : '–',
    ],
    ['in-sample recall top-1', `${inSample.top1} / ${inSample.goals} = ${percent(inSample.rate)}`],
    ...(report.paired ? pairedRows(report.paired) : []),
    [
      'time: ingest / passes / scoring / total',
      `${seconds(timings.ingestMs)} / ${seconds(timings.passesMs)} / ${seconds(timings.scoringMs)} / ${seconds(timings.totalMs)}`,
    ],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  const settings = Object.entries(report.settings)
    .map(([key, value]) => `${key} ${value}`)
    .join(', ');
  const lines = [
    `eval on tenant ${report.tenantId} (${settings})`,
    '',
    ...rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`),
    '',
    'passes:',
    ...report.passes.map(
      (pass) =>
        `  ${pass.id}  ${pass.status}${pass.outcome ? ` (${pass.outcome})` : ''}: qualifying ${pass.counts.qualifying}, added ${pass.counts.added}, ` +
        `updated ${pass.counts.updated}, noop ${pass.counts.noop}, superseded ${pass.counts.superseded}, skipped ${pass.counts.skipped}`,
    ),
    '',
    `live skills (${skills.list.length}): name, provenance runs, plurality family and its share`,
    ...skills.list.map(
      (skill) =>
        `  ${skill.name}  ${skill.runs} runs  ${skill.family ?? '(unlabelled)'} ${percent(skill.share)}${skill.families > 1 ? `  (${skill.families} labels)` : ''}`,
    ),
  ];
  if (familyRecall.missed.length > 0) {
    const shown = familyRecall.missed.slice(0, 20);
    lines.push(
      '',
      `recurring families without exactly one clean skill (${familyRecall.missed.length}):`,
      ...shown.map((family) => `  ${family}`),
    );
    if (familyRecall.missed.length > shown.length)
      lines.push(`  … and ${familyRecall.missed.length - shown.length} more (--json lists all)`);
  }
  return lines.join('\n');
}
