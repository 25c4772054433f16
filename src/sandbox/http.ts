/** Wire helpers shared by both listeners: the one error body shape, JSON replies, bodies. */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** An error reply: every error of the sandbox is `{status:"error",message}` as JSON. */
export class HttpProblem extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

/** A JSON reply already serialized: worked out on arrival, sent once its latency is over. */
export interface JsonReply {
  status: number;
  text: string;
  headers: Readonly<Record<string, string>>;
}

export function jsonReply(status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): JsonReply {
  return { status, text: JSON.stringify(body), headers };
}

export function sendReply(res: ServerResponse, { status, text, headers }: JsonReply): void {
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
  });
  res.end(text);
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
  sendReply(res, jsonReply(status, body, headers));
}

export function sendProblem(res: ServerResponse, problem: HttpProblem): void {
  sendJson(res, problem.status, { status: 'error', message: problem.message }, problem.headers);
}

/** Collects the request body; bodies here are small JSON documents. */
export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Parses a JSON object body or answers 400. */
export function parseJsonObject(body: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new HttpProblem(400, 'Request body must be a JSON object');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new HttpProblem(400, 'Request body must be a JSON object');
  }
  return parsed as Record<string, unknown>;
}

/**
 * A request's target (`/v1.3/tags?x=1`) as a URL. Parsed as a path on a fixed origin: on its
 * own, `new URL('//v1.3/tags', base)` would read `v1.3` as a host name.
 */
export function requestTarget(target: string | undefined): URL {
  return new URL(`http://sandbox.invalid${target?.startsWith('/') ? target : `/${target ?? ''}`}`);
}
