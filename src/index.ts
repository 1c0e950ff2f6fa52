/**
 * The client module agent runtimes import: report finished runs, start and watch passes.
 * (Recall, sessions and skill authoring are reached over the HTTP API.)
 */
export { reportRunCompleted, RunReportInvalid, RunReportTooLarge, MAX_REPORT_PAYLOAD_BYTES } from './client/run-intake-client.ts';
export { intakeWorkflowId, reviewWorkflowId } from './contracts/intake-contract.ts';
export {
  startSynthesisPass,
  queryPassProgress,
  passResult,
  setSynthesisSchedule,
  describeSynthesisSchedule,
  pauseSynthesisSchedule,
  resumeSynthesisSchedule,
  deleteSynthesisSchedule,
} from './client/synthesis-client.ts';
export { runReportSchema, parseRunReport, type RunReport } from './runs/run-report.ts';
export type { PassProgress, SynthesisPassInput } from './contracts/pass-contract.ts';
export type { PassRecord, PassCounts } from './contracts/pass-record.ts';
export { convertTraceDocument, TraceNotConvertible } from './traces/trace-document.ts';
export {
  INGEST_FORMATS,
  TRACE_FORMATS,
  type IngestFormat,
  type TraceFormat,
  type ConvertedRun,
  type TraceRefusal,
} from './traces/trace-run.ts';
