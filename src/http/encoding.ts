/**
 * Content codings: what carectl asks for, and a reply's body decoded as a stream, so that any
 * cap on its size applies to the decoded bytes and a compression bomb stops at the cap.
 */
import { PassThrough, type Readable, Transform } from 'node:stream';

/** zlib loads with the first coded reply: a command whose replies are not coded never pays for it. */
type Zlib = typeof import('node:zlib');

/**
 * Loaded once: the bundle turns each `import()` of a CommonJS module into a copy of all its
 * exports, ~40 µs a coded reply (issue 47: 16 ms of CPU in a 20k export).
 */
let zlibLoading: Promise<Zlib> | undefined;
const loadZlib = (): Promise<Zlib> => (zlibLoading ??= import('node:zlib'));

/** Every coding decoded here (Node 20 has no zstd). */
export const ACCEPT_ENCODING = 'gzip, deflate, br';

/** A reply in a coding carectl cannot decode (permanent: asking again gets the same), or whose coded bytes are broken. */
export class ReplyEncodingError extends Error {
  constructor(
    message: string,
    readonly permanent = false,
  ) {
    super(message);
  }
}

/** More codings than this are refused before any is undone: each costs a pass over the body (as curl, since CVE-2022-32206). */
export const MAX_CODINGS = 5;

/** The codings a Content-Encoding header lists, in the order they were applied; identity left out. */
export function contentCodings(header: string | string[] | undefined): string[] {
  const value = Array.isArray(header) ? header.join(',') : (header ?? '');
  return value
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
}

/**
 * The body decoded, its codings undone last-applied first; `wire()` tells the bytes received
 * so far as sent (undefined when the body is not coded: then they are the bytes read). A coding not known here fails at once; broken coded bytes fail the stream,
 * both as a ReplyEncodingError. `stop` (Ctrl-C, SIGTERM, the request's time) ends the decoding
 * between two chunks, failing the stream with its reason.
 */
export async function decodedBody(
  body: Readable,
  header: string | string[] | undefined,
  stop?: AbortSignal,
): Promise<{ stream: Readable; wire(): number | undefined }> {
  const codings = contentCodings(header);
  // Not coded: the bytes as sent are the bytes read, counted by whoever reads them.
  if (codings.length === 0) return { stream: body, wire: () => undefined };
  if (codings.length > MAX_CODINGS) {
    body.on('error', () => undefined).destroy();
    throw new ReplyEncodingError(`the reply names ${codings.length} content codings, more than the ${MAX_CODINGS} carectl decodes`, true);
  }
  const zlib = await loadZlib();
  const decoders = [...codings].reverse().map((coding) => decoder(zlib, coding));
  const unknown = [...codings].reverse().find((_, i) => decoders[i] === undefined);
  if (unknown !== undefined) {
    // Not read: the connection is dropped (its abort is no error of anyone's).
    body.on('error', () => undefined).destroy();
    throw new ReplyEncodingError(`the reply is in the ${unknown} content coding, which carectl cannot decode`, true);
  }
  const stages = decoders as Transform[];
  let wire = 0;
  body.on('data', (chunk: Buffer) => void (wire += chunk.length));
  // One stream handed out: what fails upstream reaches it, and destroying it (a reply past the
  // cap) stops every stage and the connection's body.
  const out = new PassThrough();
  body.on('error', (err) => out.destroy(err));
  for (const stage of stages)
    stage.on('error', (err) => out.destroy(new ReplyEncodingError(`the reply's ${codings.join(', ')} coding is broken (${err.message})`)));
  out.on('close', () => {
    body.destroy();
    for (const stage of stages) stage.destroy();
  });
  stages.reduce<Readable>((from, stage) => from.pipe(stage), body).pipe(out);
  if (stop) stopping(out, stop);
  return { stream: out, wire: () => wire };
}

/**
 * Decoding goes on from bytes already received, long after the connection's part is over (a
 * small body inflating to gigabytes, or to nothing through a chain of codings, where no cap on
 * the output is ever met): the stop destroys `out`, and with it every stage.
 */
function stopping(out: PassThrough, stop: AbortSignal): void {
  const onStop = (): void => void out.destroy(stop.reason as Error);
  if (stop.aborted) return onStop();
  stop.addEventListener('abort', onStop, { once: true });
  out.on('close', () => stop.removeEventListener('abort', onStop));
}

function decoder(zlib: Zlib, coding: string): Transform | undefined {
  if (coding === 'gzip' || coding === 'x-gzip') return zlib.createGunzip();
  if (coding === 'br') return zlib.createBrotliDecompress();
  if (coding === 'deflate') return deflateDecoder(zlib);
  return undefined;
}

/**
 * `deflate` is meant to be zlib-wrapped (RFC 9110), but some servers send raw deflate, as
 * browsers and curl accept: the first byte tells them apart (a zlib header's low nibble is 8).
 */
function deflateDecoder(zlib: Zlib): Transform {
  let inner: Transform | undefined;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      if (inner === undefined) {
        inner = (chunk[0]! & 0x0f) === 8 ? zlib.createInflate() : zlib.createInflateRaw();
        inner.on('data', (out: Buffer) => this.push(out));
        inner.on('error', (err) => this.destroy(err));
      }
      if (inner.write(chunk)) done();
      else inner.once('drain', () => done());
    },
    flush(done) {
      if (inner === undefined) return done();
      inner.once('end', () => done());
      inner.end();
    },
  });
}
