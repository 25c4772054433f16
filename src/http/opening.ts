/**
 * Opening a connection, bounded like the rest of a request. undici times each step on its own
 * with fixed defaults (10 s for TCP and TLS, 300 s for a proxy's answer to CONNECT), and a
 * request's signal acts only once the request is on an open connection: a proxy that took the
 * connection and never answered CONNECT held a run for 5 minutes, deaf to --request-timeout,
 * Ctrl-C and SIGTERM (field test, findings 2 and 3).
 *
 * So every connector undici uses (pools.ts passes each one through here) opens its connection
 * within one time limit for all its steps (TCP, a proxy's tunnel, TLS), and gives it up at once
 * when the stop signal fires (Ctrl-C, SIGTERM, the command's end). The requests waiting for the
 * connection then fail, with the step that did not finish in words.
 */
import { subscribe } from 'node:diagnostics_channel';
import { Socket } from 'node:net';
import type { buildConnector } from 'undici';

export type Connector = buildConnector.connector;

export interface OpeningLimit {
  /** The longest a connection may take to open, all its steps together (--request-timeout). */
  timeoutMs: number;
  /** Ends every connection still being opened, at once. */
  signal: AbortSignal;
}

/**
 * A connection that could not be opened: the request was never sent (retry.ts). `code` is node's
 * or undici's for the same failure; the failure was the proxy's when `hostname` is the proxy's
 * (proxy.ts namingProxy).
 */
export class OpeningError extends Error {
  constructor(
    message: string,
    readonly hostname: string,
    readonly code: 'UND_ERR_CONNECT_TIMEOUT' | 'ECONNRESET',
  ) {
    super(message);
    this.name = 'OpeningError';
  }
}

/** A connection under way through a proxy's tunnel, by the signal its CONNECT request carries. */
const tunnels = new WeakMap<AbortSignal, (socket: Socket) => void>();
let listening = false;

/**
 * undici's tunnel (a ProxyAgent's connector) returns no socket: the tunnel is learned of from the
 * channel it announces on, with the signal this module gave its CONNECT (undici's documented
 * `undici:proxy:connected`).
 */
function listenForTunnels(): void {
  if (listening) return;
  listening = true;
  subscribe('undici:proxy:connected', (message) => {
    const { socket, connectParams } = message as { socket: Socket; connectParams: { signal?: AbortSignal } };
    if (connectParams.signal) tunnels.get(connectParams.signal)?.(socket);
  });
}

/**
 * `connect` within `limit`. A connector that returns its socket (undici's buildConnector) is told
 * apart from undici's tunnel, which returns none and takes a signal for its CONNECT request.
 */
export function limitOpening(connect: Connector, limit: OpeningLimit): Connector {
  return (options, callback) => {
    const { signal } = limit;
    const port = options.port || (options.protocol === 'https:' ? '443' : '80');
    const target = `${options.hostname}:${port}`;
    if (signal.aborted) return callback(signal.reason as Error, null);
    const opening = new AbortController();
    let socket: Socket | undefined;
    // Through a tunnel: the proxy's socket, once it answered CONNECT.
    let tunnel: Socket | undefined;
    let settle: buildConnector.Callback | undefined = callback;
    const finish = (...args: Parameters<buildConnector.Callback>): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onStop);
      tunnels.delete(opening.signal);
      const done = settle;
      settle = undefined;
      done?.(...args);
    };
    const giveUp = (error: Error): void => {
      opening.abort(error);
      socket?.destroy();
      tunnel?.destroy();
      finish(error, null);
    };
    const onStop = (): void => giveUp(signal.reason as Error);
    const timer = setTimeout(() => giveUp(timedOut(socket, tunnel, target, options.hostname, limit.timeoutMs)), limit.timeoutMs);
    signal.addEventListener('abort', onStop, { once: true });
    const returned: unknown = connect({ ...options, signal: opening.signal } as buildConnector.Options, (err, made) => {
      // Given up already: what came too late is closed.
      if (settle === undefined) made?.destroy();
      // undici's client takes UND_ERR_SOCKET for a connection that broke once open, and opens
      // another for the waiting requests at once: a proxy that closes the connection at
      // CONNECT had thousands opened a second, forever (undici issue 3897, fixed in undici 8).
      else if ((err as { code?: string } | null)?.code === 'UND_ERR_SOCKET') {
        finish(new OpeningError('the proxy closed the connection instead of answering the tunnel request', options.hostname, 'ECONNRESET'), null);
      } else if (err) finish(err, null);
      else finish(null, made!);
    });
    if (returned instanceof Socket) socket = returned;
    else if (settle !== undefined) {
      listenForTunnels();
      tunnels.set(opening.signal, (through) => (tunnel = through));
    }
  };
}

/** The step that did not finish, in words: TCP, the proxy's tunnel, or TLS (direct or through the tunnel). */
function timedOut(socket: Socket | undefined, tunnel: Socket | undefined, target: string, hostname: string, ms: number): OpeningError {
  const within = `within ${ms} ms`;
  const step =
    socket === undefined && tunnel === undefined
      ? `the proxy did not answer the tunnel request ${within}`
      : socket?.connecting
        ? `no connection to ${target} ${within}`
        : `no TLS handshake from ${target} ${within}`;
  return new OpeningError(step, hostname, 'UND_ERR_CONNECT_TIMEOUT');
}
