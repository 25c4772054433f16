/**
 * A front for the sandbox that serves one connection at a time, as Python's single-threaded
 * http.server.HTTPServer with HTTP/1.1 keep-alive does: it serves a connection until the client
 * closes it, and a connection opened meanwhile waits, its requests unread as in the listen
 * backlog, until the one before it closed. Nothing here measures time: what it counts is what
 * the client did.
 */
import { createServer as createHttpServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { Sandbox, SandboxOptions } from '../src/sandbox/index.js';
import { openSandbox, sandboxEnv } from './helpers.js';

/** Headers of the sandbox's replies that belong to its own connection, not to the front's. */
const HOP_BY_HOP: ReadonlySet<string> = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length']);

export class OneConnectionServer {
  /** Connections the client opened. */
  connections = 0;
  /** The most connections waiting at once while another was served. */
  mostWaiting = 0;
  readonly #waiting: Socket[] = [];
  #serving: Socket | undefined;
  /** Speaks HTTP/1.1 on the connection being served; never listens itself. */
  readonly #http = createHttpServer((req, res) => this.#forward(req, res));

  private constructor(
    readonly sandbox: Sandbox,
    private readonly server: Server,
  ) {
    // Keep-alive without a limit of its own, as Python's server: the client closes the connection.
    this.#http.keepAliveTimeout = 0;
    this.#http.requestTimeout = 0;
  }

  /** A sandbox (its links and download addresses naming the front) behind a front of its own. */
  static async open(options: SandboxOptions = {}): Promise<OneConnectionServer> {
    // Paused: nothing is read from a connection until its turn.
    const server = createServer({ pauseOnConnect: true });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const front = new OneConnectionServer(await openSandbox({ ...options, publicUrl: url }), server);
    server.on('connection', (socket: Socket) => front.#arrived(socket));
    return front;
  }

  /** The environment of a client that talks to the sandbox through the front. */
  get env(): Record<string, string> {
    return { ...sandboxEnv(this.sandbox), CARECTL_BASE_URL: this.sandbox.publicUrl! };
  }

  #arrived(socket: Socket): void {
    this.connections++;
    // A client that gives up on a waiting connection resets it: that is its business.
    socket.on('error', () => undefined);
    this.#waiting.push(socket);
    this.#next();
    this.mostWaiting = Math.max(this.mostWaiting, this.#waiting.length);
  }

  /** Serves the connection that waited longest, once none is served. */
  #next(): void {
    if (this.#serving !== undefined) return;
    const socket = this.#waiting.shift();
    if (socket === undefined) return;
    this.#serving = socket;
    socket.once('close', () => {
      this.#serving = undefined;
      this.#next();
    });
    this.#http.emit('connection', socket);
    socket.resume();
  }

  #forward(req: IncomingMessage, res: ServerResponse): void {
    const { 'accept-encoding': _coding, host: _host, connection: _connection, ...headers } = req.headers;
    const forward = request(this.sandbox.baseUrl + (req.url ?? ''), { method: req.method, headers }, (reply) => {
      const chunks: Buffer[] = [];
      reply.on('data', (chunk: Buffer) => chunks.push(chunk));
      reply.on('end', () => {
        const body = Buffer.concat(chunks);
        const kept = Object.entries(reply.headers).filter(([name]) => !HOP_BY_HOP.has(name));
        res.writeHead(reply.statusCode ?? 502, { ...Object.fromEntries(kept), 'content-length': String(body.length) });
        res.end(body);
      });
    });
    req.pipe(forward);
  }

  async close(): Promise<void> {
    for (const socket of [...this.#waiting.splice(0), ...(this.#serving ? [this.#serving] : [])]) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await this.sandbox.close();
  }
}
