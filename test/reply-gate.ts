/**
 * A front for the sandbox that holds every reply until the test lets it go: how long a reply
 * takes is the test's choice, not the machine's, so what a client does with several requests in
 * flight is seen the same on a loaded machine as on a quiet one. Replies go out without a content
 * coding, so nothing runs on the thread pool: an in-process client's answer to a reply (its next
 * requests, its output) comes within a few turns of the event loop (`settled`).
 */
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Sandbox, SandboxOptions } from '../src/sandbox/index.js';
import { openSandbox, sandboxEnv } from './helpers.js';

interface Held {
  url: string;
  /** The sandbox's reply, once it came. */
  reply?: { status: number; headers: IncomingHttpHeaders; body: Buffer };
  send(): void;
}

export class ReplyGate {
  /** Requests in flight (arrived, their reply not let go), in the order they arrived. */
  readonly #held: Held[] = [];
  /** Arrivals, replies from the sandbox, replies let go and the client's output, so far: `settled` watches it. */
  changes = 0;
  #wake: (() => void) | undefined;
  /** For each reply let go, in order: its url, and the requests in flight just before (itself included). */
  readonly released: Array<{ url: string; inFlight: number }> = [];

  private constructor(
    readonly sandbox: Sandbox,
    private readonly server: Server,
  ) {}

  /** A sandbox (its links naming the gate) behind a gate of its own. */
  static async open(options: SandboxOptions): Promise<ReplyGate> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const front = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const gate = new ReplyGate(await openSandbox({ ...options, publicUrl: front }), server);
    server.on('request', (req, res) => {
      const held: Held = {
        url: req.url ?? '',
        send: () => {
          const { status, headers, body } = held.reply!;
          res.writeHead(status, headers);
          res.end(body);
        },
      };
      gate.#held.push(held);
      gate.progress();
      const { 'accept-encoding': _coding, host: _host, ...headers } = req.headers;
      const forward = request(gate.sandbox.baseUrl + held.url, { method: req.method, headers }, (reply) => {
        const chunks: Buffer[] = [];
        reply.on('data', (chunk: Buffer) => chunks.push(chunk));
        reply.on('end', () => {
          held.reply = { status: reply.statusCode ?? 0, headers: reply.headers, body: Buffer.concat(chunks) };
          gate.progress();
        });
      });
      req.pipe(forward);
    });
    return gate;
  }

  /** The environment of a client that talks to the sandbox through the gate. */
  get env(): Record<string, string> {
    return { ...sandboxEnv(this.sandbox), CARECTL_BASE_URL: this.sandbox.publicUrl! };
  }

  /** Requests in flight whose reply is in hand. */
  get ready(): number {
    return this.#held.filter((held) => held.reply !== undefined).length;
  }

  /** Lets the oldest reply in hand go. */
  releaseOldest(): void {
    const at = this.#held.findIndex((held) => held.reply !== undefined);
    const [held] = this.#held.splice(at, 1);
    this.released.push({ url: held!.url, inFlight: this.#held.length + 1 });
    this.progress();
    held!.send();
  }

  /**
   * Lets the replies in hand go one at a time, each once the client has done all it does without
   * it (the gate has settled), until none is in hand: as from a service whose latency is far
   * longer than the client's work on a page. Returns when the client asks for nothing more.
   */
  async flow(): Promise<void> {
    for (;;) {
      await settled(() => this.changes);
      if (this.ready === 0) return;
      this.releaseOldest();
    }
  }

  /** Lets replies go (flow) until the client's run ends. */
  async drive<T>(running: Promise<T>): Promise<T> {
    let done = false;
    void running.finally(() => (done = true)).catch(() => undefined);
    while (!done) {
      await this.flow();
      if (!done) await Promise.race([running, this.#change()]);
    }
    return running;
  }

  /** Something happened: a request, a reply, output (pass it runCli's onStdout). */
  progress = (): void => {
    this.changes++;
    this.#wake?.();
  };

  #change(): Promise<void> {
    return new Promise((resolve) => (this.#wake = resolve));
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    await this.sandbox.close();
  }
}

function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Resolves once `count()` has stayed the same for 100 turns of the event loop. Counted in turns,
 * not milliseconds: loopback data written is readable at the next turn, and a loaded machine
 * slows each turn, not their order.
 */
export async function settled(count: () => number): Promise<void> {
  let seen = count();
  for (let quiet = 0; quiet < 100;) {
    await turn();
    const now = count();
    quiet = now === seen ? quiet + 1 : 0;
    seen = now;
  }
}
