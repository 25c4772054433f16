/**
 * Scripted HTTP servers on loopback, for replies no honest service sends: `serve` hands each
 * request to a handler; `scriptedApi` answers with JSON values and records every request.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Transport, type TransportConfig } from '../src/http/transport.js';
import type { fakeClock } from './helpers.js';

export interface Served {
  url: string;
  hits: IncomingMessage[];
  close(): Promise<void>;
}

/** A loopback server answering each request with `handler`; `hits` counts the requests. */
export async function serve(handler: (req: IncomingMessage, res: ServerResponse, hit: number) => void): Promise<Served> {
  const hits: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    hits.push(req);
    req.resume();
    req.on('end', () => handler(req, res, hits.length));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

/** Writes 64 KiB chunks until the client hangs up (at most 64 MiB, so the test always ends). */
export function endless(res: ServerResponse, headers: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': 'application/json', ...headers });
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  res.write('[');
  let sent = 0;
  const pump = (): void => {
    while (!res.destroyed && sent < 1024) {
      sent++;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
    if (!res.destroyed) res.end(']');
  };
  pump();
}

/** A transport for transport tests: a fake clock, and a jitter draw of 1 (every backoff wait is its ceiling). */
export function testTransport(baseUrl: string, clock: ReturnType<typeof fakeClock>, overrides: Partial<TransportConfig> = {}): Transport {
  return new Transport({
    baseUrl: new URL(baseUrl),
    user: 'user',
    password: 'secret',
    userAgent: 'carectl-test',
    requestTimeoutMs: 5000,
    retries: 3,
    maxRetryWaitMs: 60_000,
    sleep: clock.sleep,
    now: clock.now,
    signal: new AbortController().signal,
    random: () => 1,
    ...overrides,
  });
}

export interface ScriptedRequest {
  method: string;
  /** Path and query as received. */
  url: string;
  body: string;
  /** The Authorization header sent, if any. */
  authorization: string | undefined;
}

/** What to answer: a JSON value (200), or a status with a JSON value or raw text. */
export type ScriptedReply = { status?: number; json?: unknown; text?: string; headers?: Record<string, string> };

export interface ScriptedApi {
  baseUrl: string;
  requests: ScriptedRequest[];
  close(): Promise<void>;
}

export async function scriptedApi(answer: (request: ScriptedRequest, res: ServerResponse) => ScriptedReply | undefined): Promise<ScriptedApi> {
  const requests: ScriptedRequest[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = {
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        body: Buffer.concat(chunks).toString('utf8'),
        authorization: req.headers.authorization,
      };
      requests.push(request);
      // undefined: the answer function replied (or left the request hanging) itself
      const reply = answer(request, res);
      if (reply === undefined) return;
      const text = reply.text ?? JSON.stringify(reply.json ?? {});
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The environment of a cron job pointed at a scripted API. */
export function scriptedEnv(api: ScriptedApi): Record<string, string> {
  return { CARECTL_BASE_URL: api.baseUrl, CARECTL_USER: 'bot', CARECTL_PASSWORD: 'scripted-secret', XDG_CONFIG_HOME: '/nonexistent/carectl-test-config' };
}

/** A throwaway HTTP server on loopback that records what reached it. */
export interface LocalServer {
  url: string;
  requests: Array<{ url: string; authorization: string | undefined }>;
  close(): Promise<void>;
}

export async function localServer(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<LocalServer> {
  const requests: LocalServer['requests'] = [];
  const server = createServer((req, res) => {
    requests.push({ url: req.url ?? '', authorization: req.headers.authorization });
    answer(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
