/**
 * A scripted API for replies no honest service sends: each request is answered by a function of
 * the test's, over real HTTP on loopback, and recorded.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedRequest {
  method: string;
  /** Path and query as received. */
  url: string;
  body: string;
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
      const request = { method: req.method ?? 'GET', url: req.url ?? '/', body: Buffer.concat(chunks).toString('utf8') };
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
