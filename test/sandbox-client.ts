/** Raw HTTP against the sandbox, as a client of the spec would talk to it (no carectl in between). */
import assert from 'node:assert/strict';
import type { Sandbox } from '../src/sandbox/index.js';

export type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The demo data's last day, and noon on it: the clock the sandbox tests run at. */
export const ANCHOR = '2024-06-30';
export const NOON = Date.parse(`${ANCHOR}T12:00:00Z`);

export function authHeader(sandbox: Sandbox, password = sandbox.password): string {
  return `Basic ${Buffer.from(`${sandbox.user}:${password}`).toString('base64')}`;
}

export interface Answer {
  status: number;
  headers: Headers;
  body: Json;
  /** Milliseconds from sending to the whole reply read. */
  elapsed: number;
}

/** path is relative to baseUrl unless it is absolute (a paging link). */
export async function call(sandbox: Sandbox, path: string, init: RequestInit & { auth?: boolean } = {}): Promise<Answer> {
  const headers = new Headers(init.headers);
  if (init.auth !== false && !headers.has('authorization')) headers.set('authorization', authHeader(sandbox));
  if (init.body !== undefined) headers.set('content-type', 'application/json');
  const started = performance.now();
  const response = await fetch(path.startsWith('http') ? path : sandbox.baseUrl + path, { ...init, headers });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text), elapsed: performance.now() - started };
}

export async function get(sandbox: Sandbox, path: string): Promise<Json> {
  const answer = await call(sandbox, path);
  assert.equal(answer.status, 200, `${path}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}
