/**
 * For --verbose: an answer's details, among them whether its request went out on a new
 * connection or a reused one, told by undici's diagnostics channel (the socket its headers were
 * written to). Listened to only once a traced request asks: a run without --verbose pays nothing.
 */
import { subscribe } from 'node:diagnostics_channel';
import type { AttemptReply } from './attempt.js';
import { contentCodings } from './encoding.js';
import { formatBytes } from '../core/bytes.js';

interface SendHeaders {
  request: { method?: string; origin?: string | URL; path?: string };
  socket: object;
}

const sockets = new WeakSet<object>();
/** Requests sent and not yet asked about, by `METHOD origin+path`: true on a new connection. */
const sent = new Map<string, boolean>();
let listening = false;

const key = (method: string, origin: string, path: string): string => `${method} ${origin}${path}`;

function onSendHeaders(message: unknown): void {
  const { request, socket } = message as SendHeaders;
  sent.set(key(request.method ?? '', String(request.origin ?? ''), request.path ?? ''), !sockets.has(socket));
  sockets.add(socket);
  // Bounded: an answer never asked about (a failed attempt) is not kept for long.
  if (sent.size > 256) sent.delete(sent.keys().next().value!);
}

/** Starts listening (idempotent): call before the first traced request is sent. */
export function watchConnections(): void {
  if (listening) return;
  listening = true;
  subscribe('undici:client:sendHeaders', onSendHeaders);
}

/** 'new connection', 'reused connection', or undefined when the request was not seen. */
export function connectionOf(method: string, url: URL): string | undefined {
  const k = key(method, url.origin, url.pathname + url.search);
  const fresh = sent.get(k);
  sent.delete(k);
  return fresh === undefined ? undefined : fresh ? 'new connection' : 'reused connection';
}

/**
 * `HTTP/1.1, direct, reused connection, gzip 1.2 KiB on the wire, 8.0 KiB decoded, 15 ms`: the
 * protocol, direct or via which proxy, the connection, the coding and bytes, the time taken. A
 * body not read (a redirect's) gives no bytes; one given up part-way (past the cap), the bytes
 * received.
 */
export function answerDetails(method: string, url: URL, seen: AttemptReply, proxy: string | undefined, ms: number): string {
  const coding = contentCodings(seen.headers?.['content-encoding']).join(', ');
  const wire = seen.wireBytes ?? seen.decodedBytes;
  const bytes = [
    wire !== undefined && (coding === '' ? formatBytes(wire) : `${coding} ${formatBytes(wire)} on the wire`),
    coding !== '' && seen.decodedBytes !== undefined && `${formatBytes(seen.decodedBytes)} decoded`,
  ];
  // carectl speaks HTTP/1.1 only (undici 7 without allowH2).
  return ['HTTP/1.1', proxy === undefined ? 'direct' : `via the proxy ${proxy}`, connectionOf(method, url), ...bytes, `${ms} ms`].filter(Boolean).join(', ');
}
