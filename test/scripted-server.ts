/** A small scripted HTTP server on loopback, for replies no honest service sends. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

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
