/**
 * `api PATH`: a raw request to {base_url}/PATH for what the other commands do not cover, with
 * the same credentials, errors, retries, trace and origin rules. Prints the JSON reply: indented
 * on a terminal, one line otherwise (and always one line per page with --paginate).
 */
import { constants, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import type { Context } from '../cli/context.js';
import { CarectlError, MAY_HAVE_BEEN_APPLIED, mayHaveBeenApplied, UsageError } from '../core/errors.js';
import { parseJson } from '../core/exact-json.js';
import { utf8BomLength } from '../core/bytes.js';
import { safeJsonStringify, writeText } from '../output/index.js';
import { nextPageLink } from '../api/paging.js';
import { PageGuard, type ChainState } from '../api/page-guard.js';
import { parseEnum } from '../core/parse.js';
import type { Action, RawOptions } from '../cli/action.js';
import { addExamples } from '../cli/help.js';
import { METHODS } from '../http/methods.js';
import { formatLimit } from '../http/reply.js';

type Method = (typeof METHODS)[number];

interface ApiOptions {
  path: string;
  method: string | undefined;
  data: string | undefined;
  paginate: boolean;
}

const readOptions = (raw: RawOptions, args: readonly unknown[]): ApiOptions => ({
  path: args[0] as string,
  method: raw.method as string | undefined,
  data: raw.data as string | undefined,
  paginate: raw.paginate === true,
});
/**
 * Methods whose repetition changes nothing (RFC 9110), so a failed attempt is retried. Not
 * PATCH: a raw body may be relative; not POST: it may create twice.
 */
const IDEMPOTENT: ReadonlySet<Method> = new Set(['GET', 'PUT', 'DELETE']);

export function addApiCommand(program: Command, action: Action): void {
  const api = program
    .command('api <path>')
    .description('raw request to {base_url}/PATH with the same credentials; prints the JSON reply')
    .option('-X, --method <method>', `${METHODS.join(', ')} (default: GET, or POST with --data)`)
    .option('-d, --data <json>', 'request body: JSON text, @FILE, or @- for standard input')
    .option('--paginate', 'follow paging.next_page (same origin only); one JSON page per line');
  addExamples(api, [
    "carectl api 'v1.3/tags?page_size=5&fields=name'",
    "carectl api 'v1.3/conversations?status=unread' --paginate | jq -c '.conversations[]'",
    'carectl api v1.3/conversations/500001 -X PATCH -d \'{"status":"on_hold","tag_ids":["7005"]}\'',
    'carectl api v1.1/reports -d @report-request.json',
  ]);
  api.action(action(readOptions, apiCommand, ['output-file', 'query']));
}

async function apiCommand(ctx: Context, opts: ApiOptions): Promise<void> {
  const { data, path: target } = opts;
  const given = opts.method?.toUpperCase() ?? (data === undefined ? 'GET' : 'POST');
  const method = parseEnum(given, '--method', METHODS);
  if (target.trim() === '') throw new UsageError('api: give a PATH below the base address, e.g. v1.3/tags');
  // The version is part of PATH here; a flag that would not change it must not look as if it did.
  if (ctx.globals.apiVersion !== undefined) throw new UsageError('--api-version: `carectl api` sends PATH as given; put the version in it (v1.1/reports)');
  // Only the flag: a CARECTL_OUTPUT or profile default is meant for the other commands.
  if (ctx.globals.output !== undefined && ctx.globals.output !== 'json') {
    throw new UsageError(`--output: \`carectl api\` prints the service's JSON as it is; leave -o out (or use -o json)`);
  }
  if (opts.paginate && method !== 'GET') throw new UsageError(`--paginate reads next_page links with GET; it does not go with -X ${method}`);
  if (data !== undefined && method === 'GET') throw new UsageError('--data sends a body, which GET does not take; use -X POST, PUT, PATCH or DELETE');
  const body = data === undefined ? undefined : await readBody(ctx, data);

  const transport = await ctx.transport({ path: target });
  const url = transport.url(target);
  if (url.origin !== transport.baseUrl.origin) {
    throw new UsageError(`api: ${url.origin} is not the base address's origin (${transport.baseUrl.origin}); credentials go nowhere else`);
  }
  if (!opts.paginate) {
    const reply = await transport.request(method, url, { bodyText: body, idempotent: IDEMPOTENT.has(method) }).catch((err: unknown) => {
      // A POST is never repeated, and the transport leaves its caller to say what that means.
      if (!IDEMPOTENT.has(method) && mayHaveBeenApplied(err))
        throw new CarectlError(`${(err as CarectlError).message}; ${MAY_HAVE_BEEN_APPLIED}: look before sending it again`, (err as CarectlError).exitCode);
      throw err;
    });
    await printJson(ctx, reply, ctx.io.stdout.isTTY ? 2 : undefined);
    return;
  }
  // The same guard as the lists: empty pages are followed, loops and repeated pages end it.
  const guard = new PageGuard();
  let previous: ChainState | undefined;
  for (let page: URL | null = url; page !== null;) {
    guard.enter(page.href);
    const reply = await transport.get(page);
    const link = nextPageLink(reply);
    previous = guard.follow(previous, recordsOf(reply), page.href, link !== null);
    await printJson(ctx, reply);
    page = link === null ? null : transport.sameOriginUrl(link, page);
  }
}

/** An empty reply (null) prints nothing: a DELETE's empty 200 is not the JSON value null. --query: what it makes of the reply (of each page). */
async function printJson(ctx: Context, reply: unknown, indent?: number): Promise<void> {
  if (reply === null) return;
  const query = await ctx.query();
  const text = query ? safeJsonStringify(query(reply), 2) : safeJsonStringify(reply, indent);
  await writeText(ctx.io.stdout.stream, `${text}\n`, ctx.io.signal);
}

/** The records of a page: the reply's first array (the reply itself when it is one). */
function recordsOf(reply: unknown): unknown[] {
  if (Array.isArray(reply)) return reply;
  if (!reply || typeof reply !== 'object') return [];
  return (Object.values(reply).find(Array.isArray) as unknown[] | undefined) ?? [];
}

/**
 * -d JSON, @FILE or @-: the body's text, parsed here so that invalid JSON is a usage error and
 * nothing is sent; then sent as written, as curl and gh send it.
 */
async function readBody(ctx: Context, data: string): Promise<string> {
  let source = '--data';
  let json = data;
  if (data === '@-') {
    if (ctx.io.stdin.isTTY) throw new UsageError('--data @- reads the body from standard input; pipe it in');
    source = 'standard input';
    json = await readStdin(ctx.io.stdin.stream);
  } else if (data.startsWith('@')) {
    source = data.slice(1);
    json = await readDataFile(path.resolve(ctx.io.cwd, source), source);
  }
  try {
    parseJson(json);
    return json;
  } catch (err) {
    // The parser's message quotes the text, which may be a password file: only where it failed is said.
    throw new UsageError(`--data: ${source === '--data' ? 'not' : `${source} is not`} valid JSON${whereInvalid(json, (err as Error).message)}`);
  }
}

/** The largest -d @FILE read: a request body, far below what would hold the process for long. */
const MAX_DATA_BYTES = 16 * 1024 * 1024;

/**
 * A -d @FILE's text. Only a regular file is read: it is opened without blocking and checked by
 * its descriptor, as a FIFO with no writer would block the open where no signal ends it (and a
 * device never end); a pipe's content goes through -d @-.
 */
async function readDataFile(file: string, source: string): Promise<string> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
    const stats = await handle.stat();
    if (!stats.isFile()) throw new UsageError(`--data: ${source} is not a regular file (${fileKind(stats)}); pipe its content in with -d @- instead`);
    if (stats.size > MAX_DATA_BYTES)
      throw new UsageError(`--data: ${source} is larger than ${formatLimit(MAX_DATA_BYTES)}, more than a request body carectl sends`);
    return utf8Body(await handle.readFile(), source);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`--data: cannot read ${source}: ${(err as { code?: string }).code ?? String(err)}`);
  } finally {
    await handle?.close();
  }
}

/** -d @-: standard input, up to the size a -d @FILE may have. */
async function readStdin(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const bytes = Buffer.from(chunk as Buffer);
    size += bytes.length;
    if (size > MAX_DATA_BYTES)
      throw new UsageError(`--data: standard input is larger than ${formatLimit(MAX_DATA_BYTES)}, more than a request body carectl sends`);
    chunks.push(bytes);
  }
  return utf8Body(Buffer.concat(chunks), 'standard input');
}

/**
 * A body's bytes as text: JSON is UTF-8 (RFC 8259 8.1), whose byte order mark a reader may leave
 * out. Other bytes are refused: decoded, they would go out as U+FFFD (M\xfcller as M�ller).
 */
function utf8Body(bytes: Buffer, source: string): string {
  const start = utf8BomLength(bytes);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(start));
  } catch {
    throw new UsageError(`--data: ${source} is not UTF-8 text (a Latin-1 file?); a JSON body is UTF-8: convert it first (iconv -f latin1 -t utf-8)`);
  }
}

function fileKind(stats: Stats): string {
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isSocket()) return 'a socket';
  if (stats.isDirectory()) return 'a folder';
  return 'a device';
}

/** ` (at line L, column C)` from a JSON.parse message that names a position, else nothing. */
function whereInvalid(json: string, message: string): string {
  const at = /at position (\d+)/.exec(message)?.[1] ?? (/end of JSON input/.test(message) ? String(json.length) : undefined);
  if (at === undefined) return '';
  const before = json.slice(0, Number(at)).split('\n');
  return ` (at line ${before.length}, column ${before.at(-1)!.length + 1})`;
}
