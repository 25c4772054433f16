/** Whether a base address is safe to send credentials to, and origin comparisons. */
import { UsageError } from '../core/errors.js';

/**
 * Credentials go over plain http only to this machine, unless the user insists: a password in
 * clear text across a network is the kind of mistake a tool should refuse to make quietly.
 * `source` names where the address came from in messages (`--base-url`, `CARECTL_BASE_URL` …).
 */
export function checkBaseUrl(text: string, insecureHttp: boolean, source = '--base-url'): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`${source}: "${text}" is not a URL; use https://host[/path]`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UsageError(`${source}: "${text}" must use https:// (or http:// on loopback)`);
  if (url.username || url.password) throw new UsageError(`${source}: put credentials in CARECTL_USER/CARECTL_PASSWORD or \`carectl login\`, not in the URL`);
  if (url.protocol === 'http:' && !isLoopback(url.hostname) && !insecureHttp) {
    throw new UsageError(
      `${source}: refusing plain http to ${url.host}: credentials would cross the network unencrypted; use https:// or pass --insecure-http`,
    );
  }
  if (url.search || url.hash) throw new UsageError(`${source}: give the address without a query or fragment`);
  if (/\/(v1(\.\d)?|api\/1)\/?$/.test(url.pathname)) {
    throw new UsageError(`${source}: give the address without a version segment (not ${url.pathname.replace(/\/$/, '')}); carectl adds it per resource`);
  }
  return url;
}

/** Whether two addresses share scheme, host and port (false when either is missing or not a URL). */
export function sameOrigin(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return false;
  try {
    const origin = new URL(a).origin;
    return origin !== 'null' && origin === new URL(b).origin;
  } catch {
    return false;
  }
}

export function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}
