/**
 * The parts of undici carectl uses (src/http/undici.ts), each from its file deep inside
 * undici/lib, as undici's index loads them: the index also loads fetch, WebSocket, the mocks, the
 * cache stores and the HTTP/2 client (and with it node:http2, tls and crypto). scripts/bundle.mjs
 * makes the undici file of them; test/undici-patches.test.ts checks that each file is still the
 * part of that name undici's index exports, so a bump of the undici pin that moves one fails there.
 */

/** Exported by name, loaded with the file. */
export const UNDICI_PARTS = {
  Agent: 'undici/lib/dispatcher/agent.js',
  // Already loaded by Agent: src/http/pools.ts makes them itself, and their connectors.
  Pool: 'undici/lib/dispatcher/pool.js',
  Client: 'undici/lib/dispatcher/client.js',
  buildConnector: 'undici/lib/core/connect.js',
};

/** Exported by name, loaded on first use: only a run with a proxy variable set needs it. */
export const UNDICI_LAZY_PARTS = { EnvHttpProxyAgent: 'undici/lib/dispatcher/env-http-proxy-agent.js' };

/** The base class of every dispatcher, and the request API undici's index gives its prototype (`dispatcher.request`). */
export const UNDICI_DISPATCHER = 'undici/lib/dispatcher/dispatcher.js';
export const UNDICI_API = 'undici/lib/api/index.js';
