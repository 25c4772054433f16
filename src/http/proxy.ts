/**
 * The standard proxy variables, read as curl and gh read them: HTTPS_PROXY for https addresses,
 * HTTP_PROXY for plain http ones (neither stands in for the other), NO_PROXY for the hosts that
 * are reached directly; lower case first, then upper case; an empty value is unset. They come
 * from the injected environment (Io.env), never from process.env.
 *
 * undici's EnvHttpProxyAgent does the routing: https goes through a CONNECT tunnel, plain http is
 * sent in absolute form (`GET http://host/path`) as curl sends it (`proxyTunnel: false`; undici
 * would otherwise tunnel http too, which common proxies refuse for ports other than 443).
 * Credentials in the proxy URL (`http://u:p@proxy:3128`) go as Proxy-Authorization.
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import type { Dispatcher } from 'undici';
import { UsageError } from '../core/errors.js';
import { basicCredentialForms } from './redact.js';
import type { Undici } from './undici.js';
import { lastingPools } from './pools.js';
import type { OpeningLimit } from './opening.js';

export interface ProxySettings {
  /** For https addresses (HTTPS_PROXY). */
  https?: string;
  /** For plain http addresses (HTTP_PROXY). */
  http?: string;
  /** Hosts reached directly (NO_PROXY): names, domain suffixes, host:port, or `*`. */
  noProxy?: string;
}

function variable(env: Readonly<Record<string, string | undefined>>, name: string): string | undefined {
  const value = env[name.toLowerCase()] ?? env[name.toUpperCase()];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/**
 * The proxies the environment names, each checked to be a URL (a bare `host:port` means http).
 * A value that is not one is a usage error naming the variable (never its credentials).
 */
export function proxyFromEnv(env: Readonly<Record<string, string | undefined>>): ProxySettings {
  const settings: ProxySettings = {};
  for (const [key, name] of [
    ['https', 'HTTPS_PROXY'],
    ['http', 'HTTP_PROXY'],
  ] as const) {
    const value = variable(env, name);
    if (value !== undefined) settings[key] = proxyUrl(value, name).href;
  }
  const noProxy = variable(env, 'NO_PROXY');
  if (noProxy !== undefined) settings.noProxy = noProxy;
  return settings;
}

function proxyUrl(value: string, name: string): URL {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new UsageError(`${name}: not a proxy address (expected http://HOST:PORT)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`${name}: proxy scheme ${url.protocol} is not supported (use http:// or https://)`);
  }
  return url;
}

/** The proxy a request to `url` goes through, or undefined when it goes direct (no proxy, or NO_PROXY names it). */
export function proxyFor(url: URL, proxy: ProxySettings | undefined): string | undefined {
  const via = url.protocol === 'https:' ? proxy?.https : url.protocol === 'http:' ? proxy?.http : undefined;
  return via !== undefined && !isLoopback(url) && !bypassed(url, proxy?.noProxy) ? via : undefined;
}

/** This machine (localhost, 127.0.0.0/8, ::1): never through a proxy, as Go and gh have it. */
function isLoopback(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || bypassed(url, '127.0.0.0/8,::1');
}

/** The proxy's name for messages, `HOST:PORT (HTTPS_PROXY)`, never with its credentials. */
export function proxyLabel(url: URL, proxy: ProxySettings | undefined): string | undefined {
  const via = proxyFor(url, proxy);
  if (via === undefined) return undefined;
  const { protocol, host, port } = new URL(via);
  return `${host}${port ? '' : protocol === 'https:' ? ':443' : ':80'} (${url.protocol === 'https:' ? 'HTTPS_PROXY' : 'HTTP_PROXY'})`;
}

/**
 * Whether NO_PROXY names the host of `url`, as curl and Go read it: `*`; a name, which also
 * covers its subdomains (`example.com`, `.example.com`); an IP address, IPv6 with or without
 * brackets; a CIDR range (`10.0.0.0/8`, `fd00::/8`); any of them with `:PORT` to match one port.
 */
export function bypassed(url: URL, noProxy: string | undefined): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  const family = isIP(host);
  for (const raw of (noProxy ?? '').split(/[\s,]+/)) {
    const entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    if (entry === '*') return true;
    const [name, entryPort] = splitPort(entry);
    if (entryPort !== undefined && entryPort !== port) continue;
    const cidr = /^(.+)\/(\d{1,3})$/.exec(name);
    if (cidr) {
      if (inRange(host, family, cidr[1]!, Number(cidr[2]))) return true;
      continue;
    }
    if (family !== 0 && isIP(name) === family) {
      if (sameAddress(name, host, family)) return true;
      continue;
    }
    const domain = name.replace(/^\*?\./, '');
    if (host === domain || host.endsWith(`.${domain}`)) return true;
  }
  return false;
}

/** Whether the host is an address of the CIDR range `base/bits`; a name, or a range that is not one, is not in it. */
function inRange(host: string, family: number, base: string, bits: number): boolean {
  const kind = isIP(base);
  if (family === 0 || kind !== family) return false;
  const ranges = new BlockList();
  try {
    ranges.addSubnet(base, bits, kind === 6 ? 'ipv6' : 'ipv4');
  } catch {
    return false;
  }
  return ranges.check(host, family === 6 ? 'ipv6' : 'ipv4');
}

/** `host:port`, `[v6]:port`, or a bare host (an IPv6 literal has colons of its own). */
function splitPort(entry: string): [string, string | undefined] {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) return [bracketed[1]!, bracketed[2]];
  const withPort = /^([^:]+):(\d+)$/.exec(entry);
  return withPort ? [withPort[1]!, withPort[2]] : [entry, undefined];
}

function sameAddress(a: string, b: string, family: number): boolean {
  const list = new BlockList();
  list.addAddress(a, family === 6 ? 'ipv6' : 'ipv4');
  return list.check(b, family === 6 ? 'ipv6' : 'ipv4');
}

/** Failures to open a connection (or to find the host), as node and undici name them. */
const CONNECT_FAILURES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * A failure to connect to the proxy itself (refused, no such host, unreachable), said as such:
 * `the proxy HOST:PORT (HTTPS_PROXY) cannot be reached: <reason>`, never with its credentials (and
 * the proxy's own answer: `the proxy HOST:PORT (HTTPS_PROXY) refused the request …`, `… could not reach the service …`);
 * `reason` unchanged for any other failure (the service's own address, a host in NO_PROXY). The
 * address that failed is the proxy's when the proxy's name resolves to it (looked up only here,
 * on the way to an error).
 */
export async function namingProxy(err: unknown, url: URL, proxy: ProxySettings | undefined, reason: string): Promise<string> {
  const via = proxyFor(url, proxy);
  if (via === undefined) return reason;
  // The proxy's own answer (407, a CONNECT it would not open), or its silence, names it as well.
  if (reason.startsWith('the proxy ')) return reason.replace(/^the proxy /, `the proxy ${proxyLabel(url, proxy)} `);
  const { protocol, hostname, port } = new URL(via);
  const host = hostname.replace(/^\[|\]$/g, '');
  const proxyPort = port || (protocol === 'https:' ? '443' : '80');
  for (
    let e = err as { code?: string; address?: string; port?: number; hostname?: string; cause?: unknown } | undefined, depth = 0;
    e && depth < 4;
    e = e.cause as typeof e, depth++
  ) {
    if (e.code === undefined || !CONNECT_FAILURES.has(e.code)) continue;
    const atProxy =
      e.hostname !== undefined ? e.hostname === host : String(e.port) === proxyPort && e.address !== undefined && (await addressesOf(host)).includes(e.address);
    if (atProxy) return `the proxy ${hostname}:${proxyPort} (${url.protocol === 'https:' ? 'HTTPS_PROXY' : 'HTTP_PROXY'}) cannot be reached: ${reason}`;
  }
  return reason;
}

function addressesOf(host: string): Promise<string[]> {
  if (isIP(host) !== 0) return Promise.resolve([host]);
  return lookup(host, { all: true }).then(
    (found) => found.map(({ address }) => address),
    () => [],
  );
}

/** The proxy URLs' credentials in every form they could be echoed in (see redact()). */
export function proxySecrets(proxy: ProxySettings | undefined): string[] {
  const secrets: string[] = [];
  for (const value of [proxy?.https, proxy?.http]) {
    if (value === undefined) continue;
    const url = new URL(value);
    if (url.password !== '') {
      const user = decodeURIComponent(url.username);
      const password = decodeURIComponent(url.password);
      secrets.push(...basicCredentialForms(user, password), url.password);
    }
  }
  return secrets;
}

/**
 * A dispatcher for requests to `url`'s scheme: undici's EnvHttpProxyAgent when that scheme has a
 * proxy, else a plain Agent (nothing of the proxy code is loaded for a direct connection). Its
 * connections open within `limit`, every step of them (opening.ts).
 */
export function createDispatcher(
  undici: Undici,
  url: URL,
  proxy: ProxySettings | undefined,
  settings: { connections: number; keepAliveTimeout?: number; trace?: ((line: string) => void) | undefined },
  limit: OpeningLimit,
): Dispatcher {
  const via = proxyFor(url, proxy);
  const { trace, ...kept } = settings;
  // Pools that outlast a server's keep-alive closes (pools.ts), through a proxy too.
  const factory = lastingPools(undici, limit, trace);
  const options = { ...kept, factory };
  if (via === undefined) return new undici.Agent(options);
  return new undici.EnvHttpProxyAgent({
    ...options,
    // The one proxy for this scheme; the other is never used by this dispatcher. Empty strings,
    // not undefined: undici would read process.env for a missing one. NO_PROXY was applied by
    // proxyFor (undici's own reading knows no CIDR ranges).
    httpProxy: url.protocol === 'http:' ? via : '',
    httpsProxy: url.protocol === 'https:' ? via : '',
    noProxy: '',
    proxyTunnel: false,
    // The connection to the proxy is made by a pool of ours as well; undici's fixed timeouts of
    // the connection to the proxy and of the TLS through the tunnel are off: `limit` bounds them.
    clientFactory: factory,
    proxyTls: { timeout: 0 },
    requestTls: { timeout: 0 },
  });
}
