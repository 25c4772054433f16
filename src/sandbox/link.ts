/**
 * The wire side of the sandbox's replies: compressed when the client asks (as a gzip-enabled
 * front such as nginx does), and paced to a bandwidth shared by every connection, to rehearse
 * a thin link.
 */
import type { ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { brotliCompress, constants, deflate, gzip } from 'node:zlib';

/** Smaller bodies go as they are, as nginx's gzip_min_length leaves them. */
const MIN_COMPRESSED_BYTES = 256;

const CODERS: ReadonlyArray<readonly [string, (bytes: Buffer) => Promise<Buffer>]> = [
  // nginx's default level: cheap on the sandbox's one thread, most of the gain.
  ['gzip', (bytes) => promisify(gzip)(bytes, { level: 1 })],
  ['br', (bytes) => promisify(brotliCompress)(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 1 } })],
  ['deflate', (bytes) => promisify(deflate)(bytes, { level: 1 })],
];

/** The coding the client accepts that the sandbox prefers (gzip, br, deflate), or none. */
export function chosenCoding(acceptEncoding: string | undefined): string | undefined {
  const accepted = new Map<string, number>();
  for (const part of (acceptEncoding ?? '').toLowerCase().split(',')) {
    const [name, ...params] = part.split(';').map((p) => p.trim());
    const q = params.find((p) => p.startsWith('q='));
    if (name) accepted.set(name, q === undefined ? 1 : Number(q.slice(2)));
  }
  return CODERS.find(([name]) => (accepted.get(name) ?? accepted.get('*') ?? 0) > 0)?.[0];
}

/** The body in the client's preferred coding, with its Content-Encoding; as it is when none applies. */
export async function encodedBody(body: Buffer, acceptEncoding: string | undefined): Promise<{ bytes: Buffer; headers: Record<string, string> }> {
  const coding = body.length >= MIN_COMPRESSED_BYTES ? chosenCoding(acceptEncoding) : undefined;
  const coder = CODERS.find(([name]) => name === coding)?.[1];
  if (coder === undefined) return { bytes: body, headers: {} };
  return { bytes: await coder(body), headers: { 'content-encoding': coding!, vary: 'accept-encoding' } };
}

/**
 * A rate as `--bandwidth` takes it, per second: bits (`20mbit`, `512kbit`) or bytes (`2MB`,
 * `300KB`, upper-case B); in bytes per second, undefined when it is not one.
 */
export function parseBandwidth(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)([kmg]?)(bit|B)$/i.exec(text.trim());
  if (!match || (match[3] !== 'B' && match[3]!.toLowerCase() !== 'bit')) return undefined;
  const scale = { '': 1, k: 1e3, m: 1e6, g: 1e9 }[match[2]!.toLowerCase() as '' | 'k' | 'm' | 'g'];
  const perSecond = (Number(match[1]) * scale) / (match[3] === 'B' ? 1 : 8);
  return perSecond >= 1 ? perSecond : undefined;
}

/** One link every reply shares: bytes leave no faster than its rate, in 16 KiB slices. */
export class Link {
  #freeAt = 0;
  constructor(
    private readonly bytesPerSecond: number,
    private readonly sleep: (ms: number) => Promise<void>,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Writes `bytes` to `res` at the link's pace, then ends it; stops early when it closes. */
  async send(res: Pick<ServerResponse, 'destroyed' | 'write' | 'end'>, bytes: Buffer): Promise<void> {
    const slice = 16 * 1024;
    for (let at = 0; at < bytes.length && !res.destroyed; at += slice) {
      const part = bytes.subarray(at, at + slice);
      const now = this.now();
      this.#freeAt = Math.max(now, this.#freeAt) + (part.length * 1000) / this.bytesPerSecond;
      await this.sleep(this.#freeAt - now);
      res.write(part);
    }
    if (!res.destroyed) res.end();
  }
}
