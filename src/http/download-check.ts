/**
 * Whether a download's 200 reply is a report file at all. carectl sends no credentials to the
 * download address, so a host that wants a login answers with its login page, or the service's
 * error shape, where the file should be; saved as the report, a cron job would ship it on. Told
 * from what leaves no doubt: the Content-Type (text/html), and the body's first bytes, held back
 * as they stream (never the whole body: a report can be gigabytes).
 */
import { utf8BomLength } from '../core/bytes.js';
import { CarectlError } from '../core/errors.js';
import { redact } from './redact.js';
import { pageTitle } from './reply.js';

/** The most bytes held back to decide: an error body or a page's title fits well within. */
export const FIRST_BYTES = 64 * 1024;

/** The report formats of the API, by the media types that name them. */
const FORMAT_OF_TYPE: Readonly<Record<string, string>> = {
  'text/csv': 'csv',
  'application/csv': 'csv',
  'text/comma-separated-values': 'csv',
  'application/json': 'json',
  'text/json': 'json',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
};

function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/** The report format a Content-Type names (csv, json or xlsx); undefined for a generic or missing one. */
export function formatOfType(contentType: string | undefined): string | undefined {
  const type = mediaType(contentType);
  return FORMAT_OF_TYPE[type] ?? (type.endsWith('+json') ? 'json' : undefined);
}

/** What is known of the reply before its body: its Content-Type, and the format asked for (create --format). */
export interface ReplyFacts {
  contentType: string | undefined;
  asked: string | undefined;
}

/** Why the reply is not the report; undefined when it is (as far as its first bytes tell); MORE: not yet known. */
const MORE = Symbol('more bytes');
type Verdict = string | undefined | typeof MORE;

const ZIP_SIGNATURE = Buffer.from('PK\x03\x04', 'latin1');
const OLE2_SIGNATURE = Buffer.from([0xd0, 0xcf, 0x11, 0xe0]);
const HTML_STARTS = ['<!doctype html', '<html'];

/**
 * The verdict on the first bytes `head` (all of the body when `complete`). HTML is an HTML page in
 * any format; an xlsx workbook is a ZIP archive; a JSON object is an error in place of a csv or
 * xlsx report, and in place of a json report only in the spec's error shape, small and whole.
 */
function verdict(head: Buffer, complete: boolean, facts: ReplyFacts): Verdict {
  const more = !complete && head.length < FIRST_BYTES;
  const text = head.subarray(startOfText(head)).subarray(0, 16).toString('latin1').toLowerCase();
  if (text === '' && more) return MORE;
  const page = pageVerdict(head, text, more, facts.contentType);
  if (page !== undefined) return page;
  const format = facts.asked ?? formatOfType(facts.contentType);
  if (text.startsWith('{')) {
    if (more) return MORE;
    const error = complete ? jsonError(head, format) : undefined;
    if (error !== undefined) return error;
  }
  // A workbook is a ZIP archive, or an encrypted one a compound file (OLE2).
  if (format === 'xlsx' && !head.subarray(0, 4).equals(ZIP_SIGNATURE) && !head.subarray(0, 4).equals(OLE2_SIGNATURE)) {
    return head.length < 4 && more ? MORE : 'a file that is not an xlsx workbook (not a ZIP archive), not the report';
  }
  return undefined;
}

/**
 * Whether the body is an HTML page. A login page says so twice: its type and its first bytes (a
 * report mislabelled text/html, as object stores serve what the uploader set, says it once).
 * Where the type names a report format, a page must show a doctype, a head or a title too. A page
 * is held whole (up to FIRST_BYTES), for its title.
 */
function pageVerdict(head: Buffer, text: string, more: boolean, contentType: string | undefined): Verdict {
  const type = mediaType(contentType);
  const htmlTyped = type === 'text/html' || type === 'application/xhtml+xml';
  const page = htmlTyped && text.startsWith('<') ? true : opensPage(text, more);
  if (page === false) return undefined;
  if (page === MORE || more) return MORE;
  const plainlyPage = text.startsWith('<!doctype html') || /<(head|title)[\s>]/i.test(head.toString('latin1'));
  return formatOfType(contentType) === undefined || plainlyPage ? htmlPage(head) : undefined;
}

/**
 * Whether the text opens an HTML page: a marker, whole and followed by a space or `>`; MORE while
 * the bytes so far could still become one.
 */
function opensPage(text: string, more: boolean): boolean | typeof MORE {
  for (const start of HTML_STARTS) {
    if (text.startsWith(start) && text.length > start.length) return /[\s>]/.test(text[start.length]!);
    if (more && start.startsWith(text)) return MORE;
  }
  return false;
}

/** Where the text starts: after a UTF-8 byte order mark and white space. */
function startOfText(head: Buffer): number {
  let at = utf8BomLength(head);
  while (at < head.length && (head[at] === 0x20 || head[at] === 0x09 || head[at] === 0x0a || head[at] === 0x0d)) at++;
  return at;
}

function htmlPage(head: Buffer): string {
  const title = pageTitle(head.toString('utf8'));
  return `an HTML page${title === undefined ? '' : ` ("${title}")`}, not the report (a login page?)`;
}

/** The keys of the spec's error body ({status: "error", message}) and those the service may add (reply.ts errorMessage). */
const ERROR_KEYS: ReadonlySet<string> = new Set(['status', 'message', 'error', 'error_code', 'param']);

/** A whole JSON body: the spec's error shape in any format; any object where csv or xlsx was due. */
function jsonError(head: Buffer, format: string | undefined): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(head.toString('utf8').replace(/^\ufeff/, ''));
  } catch {
    return undefined;
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const fields = body as Record<string, unknown>;
  const said = [fields.message, fields.error, (fields.error as Record<string, unknown> | null)?.message].find((v) => typeof v === 'string' && v !== '') as
    string | undefined;
  const words = said === undefined ? '' : `: ${shorter(redact(said))}`;
  // The spec's error body and nothing else: a json report may be one object with a status field.
  const errorShape = fields.status === 'error' && Object.keys(fields).every((key) => ERROR_KEYS.has(key));
  if (errorShape) return `an error, not the report${words}`;
  if (format === 'csv' || format === 'xlsx') return `JSON, not the ${format} report${words}`;
  return undefined;
}

/** At most 200 characters of the service's words (redacted before: a secret cut in half no longer matches). */
function shorter(text: string): string {
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

/**
 * Holds a body's first bytes until the verdict is in, then lets them and every later chunk
 * through. A reply that is not the report fails for good (asking again gets the same), naming
 * what came instead.
 */
export class FirstBytes {
  #held: Buffer[] = [];
  #size = 0;
  /** The size held when last judged: judged again once it doubled, so that tiny chunks cost linear time, not quadratic. */
  #judged = 0;
  #decided = false;
  /** `from`: who answered, as the message starts (`download from ORIGIN`). */
  constructor(
    private readonly facts: ReplyFacts,
    private readonly from: string,
  ) {}

  /** The chunks to write now: none while the first bytes are held. */
  pass(chunk: Buffer): Buffer[] {
    if (this.#decided) return [chunk];
    this.#held.push(chunk);
    this.#size += chunk.length;
    return this.#decide(false);
  }

  /** At the body's end: what is still held, once judged whole. */
  end(): Buffer[] {
    return this.#decided ? [] : this.#decide(true);
  }

  #decide(complete: boolean): Buffer[] {
    if (!complete && this.#size < FIRST_BYTES && this.#size < 2 * this.#judged) return [];
    this.#judged = this.#size;
    const found = verdict(Buffer.concat(this.#held, this.#size), complete, this.facts);
    if (found === MORE) return [];
    if (found !== undefined) throw new CarectlError(`${this.from} answered with ${found}`);
    this.#decided = true;
    const held = this.#held;
    this.#held = [];
    return held;
  }
}
