/**
 * undici, loaded on the first request so that --help and --version never pay for it. carectl
 * uses only these parts, and the request API every dispatcher has (`dispatcher.request`): the
 * bundle's undici file holds just them (scripts/bundle.mjs), which loads in half the time.
 */
import { LastingError } from '../core/errors.js';

export interface Undici {
  Agent: typeof import('undici').Agent;
  Pool: typeof import('undici').Pool;
  Client: typeof import('undici').Client;
  buildConnector: typeof import('undici').buildConnector;
  /** Only when a proxy variable is set (a getter in the bundle: the proxy code loads on first use). */
  EnvHttpProxyAgent: typeof import('undici').EnvHttpProxyAgent;
}

let loading: Promise<Undici> | undefined;

/**
 * undici not in the shape one of carectl's patches of its internals was written for (interim.ts,
 * pools.ts). undici is built into carectl at an exact version, so only a bump of that pin brings
 * this: the request fails at once, not retried, naming the patch and the upstream issue, rather
 * than the patch quietly doing nothing.
 */
export class UndiciPatchError extends LastingError {
  constructor(patch: string, upstream: string, found: string) {
    super(`undici is not in the shape carectl's patch for ${patch} expects (${upstream}): ${found}; check the patch against this undici version`);
  }
}

export function loadUndici(): Promise<Undici> {
  loading ??= import('undici');
  return loading;
}
