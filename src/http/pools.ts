/**
 * One connection pool per origin that lasts: undici 7's Agent closes an origin's pool when its
 * last connection closes, even when a request was just queued on it (nodejs/undici#5022, fixed
 * only in undici 8, which needs Node 22). Behind a server that closes keep-alive connections
 * (nginx's keepalive_requests, every N requests) each request then opened a connection of its
 * own: 211 for 229 requests. The pools made here never tell the Agent that a connection went,
 * so it never closes them; a pool reconnects by itself, and goes when the Agent is destroyed.
 * This reaches into how the Agent hears of its pools (undici is pinned to an exact version): an
 * Agent that no longer listens for those events fails the request with an UndiciPatchError, and
 * test/connections.test.ts fails where a pool is closed after a disconnect.
 */
import type { Dispatcher } from 'undici';
import { UndiciPatchError, type Undici } from './undici.js';
import { limitOpening, type Connector, type OpeningLimit } from './opening.js';
import { readingInterimReplies } from './interim.js';
import { OriginPool } from './connection-pool.js';

/** What the Agent learns from a pool's events, and acts on wrongly. */
const UNHEARD: ReadonlyArray<string | symbol> = ['disconnect', 'connectionError'];

/**
 * An Agent `factory` (also what EnvHttpProxyAgent and ProxyAgent hand on to theirs, and a
 * ProxyAgent's `clientFactory`: every pool of a dispatcher is made here). Each pool opens its
 * connections within `limit` (opening.ts): its own connector (a proxy's tunnel, a connection to
 * the proxy) or, when it has none, undici's, with undici's fixed timeout off; and reads a
 * `100 Continue` as the interim reply it is (interim.ts).
 */
export function lastingPools(undici: Undici, limit: OpeningLimit, trace?: (line: string) => void): (origin: string | URL, options: object) => Dispatcher {
  return (origin, given) => {
    const own = (given as { connect?: unknown }).connect;
    const connect = readingInterimReplies(
      limitOpening(typeof own === 'function' ? (own as Connector) : undici.buildConnector({ ...(own as object), timeout: 0 }), limit),
    );
    const options = { ...given, connect };
    const { connections } = options as { connections?: number };
    // As undici's own default factory: a single connection is a Client. A proxy's own pool (its
    // clientFactory, given no number) is undici's: ProxyAgent asks it for more than dispatch().
    const made: Dispatcher =
      connections === 1
        ? new undici.Client(origin, options)
        : connections === undefined
          ? new undici.Pool(origin, options)
          : (new OriginPool(() => new undici.Client(origin, options), connections, trace) as unknown as Dispatcher);
    const emit = made.emit.bind(made) as (event: string | symbol, ...args: unknown[]) => boolean;
    made.emit = (event: string | symbol, ...args: unknown[]): boolean => (UNHEARD.includes(event) ? false : emit(event, ...args));
    // An Agent's pool (given its number of connections) has the Agent's listeners by its first request.
    if (connections !== undefined) checkedAtFirstDispatch(made);
    return made;
  };
}

/** Fails the pool's first request if nothing listens for the events kept from the Agent: the patch would do nothing. */
function checkedAtFirstDispatch(pool: Dispatcher): void {
  const dispatch = pool.dispatch.bind(pool);
  pool.dispatch = (options, handler) => {
    pool.dispatch = dispatch;
    const unheard = UNHEARD.filter((event) => pool.listenerCount(event) === 0);
    if (unheard.length > 0) {
      throw new UndiciPatchError(
        'pools that outlast a disconnect',
        'nodejs/undici#5022, src/http/pools.ts',
        `the Agent does not listen for ${unheard.map(String).join(' or ')}`,
      );
    }
    return dispatch(options, handler);
  };
}
