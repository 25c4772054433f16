/** A report's place in its lifecycle (spec: Report lifecycle), read from the fields of its record. */
import { stringifyJson } from '../core/exact-json.js';
import type { ComputedField } from './types.js';

export const REPORT_STATES = ['queued', 'generating', 'generated', 'failed'] as const;
export type ReportState = (typeof REPORT_STATES)[number];

/** The fields whose presence tells the state (the single reply is only {id, url} without them). */
export const REPORT_STATE_FIELDS = ['generation_start_date', 'generated_date', 'download', 'failure'] as const;

/** queued: neither started nor done; generating: started; generated: done; failed: a failure says why. */
export function reportState(record: Readonly<Record<string, unknown>>): ReportState {
  if (failureText(record.failure) !== undefined) return 'failed';
  if (isSet(record.generated_date)) return 'generated';
  if (isSet(record.generation_start_date)) return 'generating';
  return 'queued';
}

/**
 * What a report's `failure` says, when it says the report failed: a non-empty string (the spec's
 * shape), `true` or a non-zero number (which can hardly mean success: waiting on would last until
 * --timeout), or an object or list with something in it, shown as JSON. `false`, `0` or an empty
 * value is no failure.
 */
export function failureText(failure: unknown): string | undefined {
  if (typeof failure === 'string') return failure.trim() === '' ? undefined : failure;
  if (failure === true || (typeof failure === 'number' && failure !== 0)) return String(failure);
  if (failure === null || typeof failure !== 'object') return undefined;
  return Object.keys(failure).length === 0 ? undefined : stringifyJson(failure);
}

function isSet(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '';
}

/** The reports' `state` column. */
export const REPORT_STATE_COLUMN: ComputedField = { name: 'state', from: reportState, needs: REPORT_STATE_FIELDS };
