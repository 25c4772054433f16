/**
 * Interim replies (1xx) before a request's answer: RFC 9110 §15.2 has a client parse and ignore
 * them. undici 7's HTTP/1 parser does so for every 1xx but one: a `100 Continue` it takes for a bad
 * response and closes the connection, failing a request the service then answered (a PATCH sent
 * four times, a report created but not printed: issue 33). carectl never asks for a 100 (no
 * `Expect`), yet a service or a proxy may send one all the same.
 *
 * So the parser hears a 100 as another interim status, which it parses and passes over as it does
 * a 102 or a 103: framing stays llhttp's, whatever pieces the reply comes in. The parser is not
 * exported: it is reached through the first connection's socket and its class's handler wrapped
 * once. This reaches into undici's internals: undici is pinned to an exact version.
 */
import type { Connector } from './opening.js';

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
      if (opened[1] && !wrapped) wrapParser(opened[1]);
    });
}

function wrapParser(socket: object): void {
  const key = Object.getOwnPropertySymbols(socket).find((symbol) => symbol.description === 'parser');
  const parser = key === undefined ? undefined : ((socket as Record<symbol, unknown>)[key] as object | null | undefined);
  // An HTTP/2 connection has no such parser (nor the flaw).
  const prototype = parser ? (Object.getPrototypeOf(parser) as { onHeadersComplete?: HeadersComplete }) : undefined;
  const original = prototype?.onHeadersComplete;
  if (prototype === undefined || typeof original !== 'function') return;
  wrapped = true;
  prototype.onHeadersComplete = function (this: unknown, statusCode, upgrade, shouldKeepAlive) {
    return original.call(this, statusCode === 100 ? INTERIM_STATUS : statusCode, upgrade, shouldKeepAlive);
  };
}
