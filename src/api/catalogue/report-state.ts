/** A report's place in its lifecycle (spec: Report lifecycle), read from the fields of its record. */
import type { ComputedField } from './types.js';

export const REPORT_STATES = ['queued', 'generating', 'generated', 'failed'] as const;
export type ReportState = (typeof REPORT_STATES)[number];

/** The fields whose presence tells the state (the single reply is only {id, url} without them). */
export const REPORT_STATE_FIELDS = ['generation_start_date', 'generated_date', 'download', 'failure'] as const;

/** queued: neither started nor done; generating: started; generated: done; failed: a failure says why. */
export function reportState(record: Readonly<Record<string, unknown>>): ReportState {
  if (isSet(record.failure)) return 'failed';
  if (isSet(record.generated_date)) return 'generated';
  if (isSet(record.generation_start_date)) return 'generating';
  return 'queued';
}

function isSet(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '';
}

/** The reports' `state` column. */
export const REPORT_STATE_COLUMN: ComputedField = { name: 'state', from: reportState, needs: REPORT_STATE_FIELDS };
