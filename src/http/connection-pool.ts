/**
 * The connections to one origin, for the requests a command keeps in flight (--parallel).
 *
 * undici's Pool hands a request to another connection when the one that just answered is still
 * settling (it takes requests again a turn of the event loop later), and carectl sends its next
 * request as soon as it has read the last answer: at --parallel 1 every request went out on the
 * other of two connections. A server that serves one connection at a time (Python's
 * http.server.HTTPServer with HTTP/1.1 keep-alive, some embedded gateways) leaves a second
 * connection in its listen backlog until the first closes, so each request waited for the first
 * connection's keep-alive timeout (10 s) or --request-timeout (field test).
 *
 * Nothing in the API's spec says how many connections it serves at once, so this pool assumes
 * nothing and opens as few as serve:
 * - a request goes to an open connection with nothing to do before any other;
 * - another connection is opened only when every open one is busy, and, until two connections
 *   have answered while both were open (the server serves more than one at a time), never while
 *   three are still waiting for their first answer;
 * - until then, a connection left with nothing to do while another waits for its first answer is
 *   closed once that one has gone unanswered for twice as long as the last answer took: a server
 *   that serves one connection at a time goes on to the one waiting. Closing an idle keep-alive
 *   connection is always allowed; it costs a new connection later.
 *
 * Not at once: carectl sends its next request only once it has decoded the last answer (gzip on
 * the thread pool, several turns of the event loop), so a connection closed a turn after its
 * answer was closed before the other's first answer came, two never answered while both were
 * open, and at a steady two in flight every request opened a connection of its own (112 in 114
 * behind nginx's limit_conn 2, field test). A server that serves connections at once answers the
 * waiting one in about the time of the last answer, while the idle one is open, and that proves it.
 */
import { EventEmitter } from 'node:events';
import type { Dispatcher } from 'undici';
import type { Undici } from './undici.js';

type Client = InstanceType<Undici['Client']>;

/** undici's handler as a dispatcher's dispatch() receives it (its legacy form: onHeaders, onComplete, onError). */
type Handler = Dispatcher.DispatchHandler & {
  onHeaders?: (status: number, ...rest: unknown[]) => boolean;
  onComplete?: (...args: unknown[]) => void;
  onError?: (err: Error) => void;
};

interface Connection {
  client: Client;
  /** Requests handed to it and not yet ended. */
  busy: number;
  /** It answered since it last connected: the server serves it. */
  answered: boolean;
  /** When its current request was handed to it (ms, the pool's clock). */
  sentAt: number;
  /** The pending check of whether to close it for a connection waiting for its first answer. */
  closing?: NodeJS.Timeout;
}

/**
 * Connections that may wait for their first answer at once until the server is seen to serve two:
 * three, so that a union's two first pages and the first cut slice (and a batch's first three ids)
 * go out together. One cost every parallel list a round trip at its start, ~20 % of a 600-record
 * export at 50 ms.
 */
const FIRST_ANSWERS_AWAITED = 3;

export class OriginPool extends EventEmitter {
  readonly #connections: Connection[] = [];
  readonly #queue: Array<{ options: Dispatcher.DispatchOptions; handler: Handler }> = [];
  /** Two connections answered while both were open: the server serves more than one at a time. */
  #concurrent = false;
  /**
   * How long the last answer took from request to headers, on a connection the server was
   * already serving (or the first answer of all): never one a server held in its backlog.
   */
  #answerTime: number | undefined;
  #closed = false;
  #destroyed = false;
  #whenEmptied: Array<() => void> = [];

  constructor(
    private readonly open: () => Client,
    private readonly most: number,
    /** --verbose: a line when a connection is closed for another to be served. */
    private readonly trace?: (line: string) => void,
    private readonly now: () => number = () => performance.now(),
  ) {
    super();
  }

  get closed(): boolean {
    return this.#closed;
  }

  get destroyed(): boolean {
    return this.#destroyed;
  }

  dispatch(options: Dispatcher.DispatchOptions, handler: Handler): boolean {
    if (this.#closed || this.#destroyed) {
      handler.onError?.(new Error(this.#destroyed ? 'the connection pool was destroyed' : 'the connection pool was closed'));
      return false;
    }
    this.#queue.push({ options, handler });
    this.#pump();
    return this.#queue.length === 0;
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const { closing } of this.#connections) clearTimeout(closing);
    if (this.#queue.length > 0) await new Promise<void>((resolve) => this.#whenEmptied.push(resolve));
    await Promise.all(this.#connections.map(({ client }) => client.close()));
  }

  async destroy(err?: Error): Promise<void> {
    this.#destroyed = true;
    for (const { closing } of this.#connections) clearTimeout(closing);
    const error = err ?? new Error('the connection pool was destroyed');
    for (const { handler } of this.#queue.splice(0)) handler.onError?.(error);
    this.#emptied();
    await Promise.all(this.#connections.map(({ client }) => client.destroy(error)));
  }

  /** Hands queued requests to the connections that may take them now. */
  #pump(): void {
    while (this.#queue.length > 0 && !this.#destroyed) {
      const connection = this.#choose();
      if (connection === undefined) return;
      const { options, handler } = this.#queue.shift()!;
      connection.busy++;
      connection.sentAt = this.now();
      clearTimeout(connection.closing);
      connection.client.dispatch(options, this.#watch(connection, handler));
    }
    this.#emptied();
  }

  #choose(): Connection | undefined {
    const idle = this.#connections.find((c) => c.busy === 0 && c.client.stats.connected);
    if (idle !== undefined) return idle;
    if (!this.#concurrent && this.#connections.filter(waitingForFirstAnswer).length >= FIRST_ANSWERS_AWAITED) return undefined;
    // A connection closed meanwhile (a keep-alive timeout) opens again for its next request.
    const unopened = this.#connections.find((c) => c.busy === 0);
    if (unopened !== undefined || this.#connections.length >= this.most) return unopened;
    const made: Connection = { client: this.open(), busy: 0, answered: false, sentAt: 0 };
    made.client.on('disconnect', () => (made.answered = false));
    this.#connections.push(made);
    return made;
  }

  /** `handler`, telling the pool when its request was answered and when it ended. */
  #watch(connection: Connection, handler: Handler): Handler {
    let ended = false;
    const end = (): void => {
      if (ended) return;
      ended = true;
      connection.busy--;
      // Not from within the client's callback: undici fails the client's other requests in a
      // loop that must not see new ones (a connection refused with several queued).
      queueMicrotask(() => {
        this.#pump();
        if (connection.busy === 0) this.#closeIfInTheWay(connection);
      });
    };
    return new Proxy(handler, {
      get: (target, key) => {
        const value: unknown = Reflect.get(target, key);
        if (typeof value !== 'function') return value;
        const call = (...args: unknown[]): unknown => (value as (...a: unknown[]) => unknown).apply(target, args);
        if (key === 'onHeaders') {
          return (status: number, ...rest: unknown[]) => {
            if (status >= 200) {
              if (connection.answered || this.#answerTime === undefined) this.#answerTime = this.now() - connection.sentAt;
              this.#answered(connection);
            }
            return call(status, ...rest);
          };
        }
        if (key === 'onComplete' || key === 'onError') {
          return (...args: unknown[]) => {
            try {
              return call(...args);
            } finally {
              end();
            }
          };
        }
        return call;
      },
    });
  }

  #answered(connection: Connection): void {
    if (connection.answered) return;
    connection.answered = true;
    this.#concurrent ||= this.#connections.some((c) => c !== connection && c.answered && c.client.stats.connected);
  }

  /**
   * Closes `connection`, idle, once a connection waiting for its first answer has waited twice as
   * long as the last answer took; checks again then if none has yet. A request handed to it
   * meanwhile cancels the check.
   */
  #closeIfInTheWay(connection: Connection): void {
    const at = this.#connections.indexOf(connection);
    const waiting = this.#connections.filter(waitingForFirstAnswer);
    if (at < 0 || this.#concurrent || this.#closed || this.#destroyed || connection.busy > 0 || waiting.length === 0) return;
    const longest = this.now() - Math.min(...waiting.map((c) => c.sentAt));
    const due = 2 * (this.#answerTime ?? 0) - longest;
    if (due > 0) {
      connection.closing = setTimeout(() => this.#closeIfInTheWay(connection), due).unref();
      return;
    }
    this.#connections.splice(at, 1);
    void connection.client.close();
    this.trace?.(
      `  connections: closed an idle one while another waits for its first answer (waited ${Math.round(longest)} ms, the last answer took ${Math.round(this.#answerTime ?? 0)} ms; a server that serves one connection at a time then serves the waiting one)`,
    );
  }

  #emptied(): void {
    if (this.#queue.length === 0) for (const resolve of this.#whenEmptied.splice(0)) resolve();
  }
}

function waitingForFirstAnswer(connection: Connection): boolean {
  return connection.busy > 0 && !connection.answered;
}
