/**
 * Interim replies (1xx) before a request's answer: RFC 9110 §15.2 has a client parse and ignore
 * them. undici 7's HTTP/1 parser does so for every 1xx but one: a `100 Continue` it takes for a bad
 * response and closes the connection, failing a request the service then answered (a PATCH sent
 * four times, a report created but not printed: issue 33). carectl never asks for a 100 (no
 * `Expect`), yet a service or a proxy may send one all the same. Upstream: nodejs/undici#197,
 * labelled wontfix.
 *
 * So the parser hears a 100 as another interim status, which it parses and passes over as it does
 * a 102 or a 103: framing stays llhttp's, whatever pieces the reply comes in. The parser is not
 * exported: it is reached through the first connection's socket and its class's handler wrapped
 * once. This reaches into undici's internals (undici is pinned to an exact version): a parser not
 * found there fails the connection with an UndiciPatchError, and test/interim-replies.test.ts
 * fails where a 100 Continue is no longer read past.
 */
import type { Connector } from './opening.js';
import { UndiciPatchError } from './undici.js';

/** What the parser is told in place of 100: an interim status undici treats as any other (it singles out 100 and 101). */
const INTERIM_STATUS = 199;

type HeadersComplete = (statusCode: number, upgrade: boolean, shouldKeepAlive: boolean) => number;

let wrapped = false;

/** `connect`, whose connections' HTTP/1 parser reads a `100 Continue` as the interim reply it is. */
export function readingInterimReplies(connect: Connector): Connector {
  return (options, callback) =>
    connect(options, (...opened) => {
      // undici makes the connection's parser as it takes the socket, in this call.
      callback(...opened);
      const socket = opened[1];
      if (!socket || wrapped) return;
      const missing = wrapParser(socket);
      if (missing !== undefined) socket.destroy(new UndiciPatchError('a 100 Continue', 'nodejs/undici#197, src/http/interim.ts', missing));
    });
}

/** Wraps the parser's class once; what was not found, if the socket does not hold it as undici 7 does. */
function wrapParser(socket: object): string | undefined {
  const key = Object.getOwnPropertySymbols(socket).find((symbol) => symbol.description === 'parser');
  if (key === undefined) return "the connection's socket has no symbol 'parser'";
  const parser = (socket as Record<symbol, unknown>)[key];
  const prototype = typeof parser === 'object' && parser !== null ? (Object.getPrototypeOf(parser) as { onHeadersComplete?: HeadersComplete }) : undefined;
  const original = prototype?.onHeadersComplete;
  if (prototype === undefined || typeof original !== 'function') return "the connection's parser has no onHeadersComplete";
  wrapped = true;
  prototype.onHeadersComplete = function (this: unknown, statusCode, upgrade, shouldKeepAlive) {
    return original.call(this, statusCode === 100 ? INTERIM_STATUS : statusCode, upgrade, shouldKeepAlive);
  };
  return undefined;
}
