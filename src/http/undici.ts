/**
 * undici, loaded on the first request so that --help and --version never pay for it. carectl
 * uses only these parts, and the request API every dispatcher has (`dispatcher.request`): the
 * bundle's undici file holds just them (scripts/bundle.mjs), which loads in half the time.
 */
export interface Undici {
  Agent: typeof import('undici').Agent;
  Pool: typeof import('undici').Pool;
  Client: typeof import('undici').Client;
  buildConnector: typeof import('undici').buildConnector;
  /** Only when a proxy variable is set (a getter in the bundle: the proxy code loads on first use). */
  EnvHttpProxyAgent: typeof import('undici').EnvHttpProxyAgent;
}

let loading: Promise<Undici> | undefined;

export function loadUndici(): Promise<Undici> {
  loading ??= import('undici');
  return loading;
}
