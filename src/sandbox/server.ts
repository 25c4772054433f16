/**
 * The listeners: the API (with faults and auth), the report download host (another origin) and,
 * with annotationsPort, api/1 on a host of its own.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Runtime } from './context.js';
import { formatDate } from './dates.js';
import { type FaultKind, type FaultOptions, FaultPlan } from './faults.js';
import { DEMO_PASSWORD, DEMO_USER } from './fixtures.js';
import { generateData } from './generate.js';
import type { DateShape } from './size.js';
import { HttpProblem, type JsonReply, jsonReply, readBody, requestTarget, sendJson, sendProblem } from './http.js';
import type { SandboxData } from './model.js';
import { CONTENT_TYPES, downloadPath, REDIRECT_PREFIX, reportFileContent, reportState } from './reports.js';
import { LiveNight } from './live.js';
import { answerApi } from './router.js';
import { encodedBody, Link } from './link.js';
import { DEMO_CONVERSATIONS } from './size.js';

export interface SandboxOptions {
  /** Default '127.0.0.1'. */
  host?: string;
  /** Default 0 (a free port). */
  port?: number;
  /** Data seed, default 1. */
  seed?: number;
  /** 'YYYY-MM-DD': demo dates lie in the 365 days ending with this day; default today (UTC) from now(). */
  anchor?: string;
  /** Number of conversations including the fixtures (DEMO_CONVERSATIONS). */
  conversations?: number;
  /** How the generated conversations' sort dates lie (DATE_SHAPES), default 'year'. */
  dates?: DateShape;
  /** Time from POST to final state, default 3000 (queued for the first half, generating for the second). */
  reportDelayMs?: number;
  /** Injected clock (ms), default Date.now; drives the report lifecycle and the live night. */
  now?: () => number;
  /**
   * New conversations and messages a minute from the start, on the clock (`live.ts`): a request
   * sees every one due by then. Default: none, the data changes only by PATCH and POST.
   */
  live?: number;
  faults?: FaultOptions;
  /**
   * Added to every reply of the API listener(s), as from a distant service (real timers, even with
   * an injected clock, unless `sleep` is given); close() cuts pending replies short. Default 0.
   */
  latencyMs?: number;
  /** How the latency, slow faults and the link are waited for: a test's own, to hold replies without timing. Default: real timers. */
  sleep?: (ms: number) => Promise<void>;
  /**
   * At most this many requests in flight on the API listener(s), counted together: a request arriving while more than
   * that are in flight (itself included) is answered 429 with `Retry-After: 1`. A request is in
   * flight from its arrival until its reply is finished (latency included) or its connection
   * closes; refused ones count too. Default: no limit.
   */
  rateLimit?: number;
  /**
   * Serve api/1 (annotation-types, annotations) on a listener of its own at this port (0: a free
   * one), as the real service does on a host of its own; the API listener then answers 404 there.
   * Default: api/1 on the API listener.
   */
  annotationsPort?: number;
  /** Bytes per second of one link all replies share (a thin line to rehearse); default: no limit. */
  bandwidth?: number;
  /**
   * The address of the front the sandbox sits behind (a TLS proxy, nginx): its links and
   * download addresses name it instead of the listener, and the API listener then serves the
   * downloads too (the front has one address). Default: the listener's own address.
   */
  publicUrl?: string;
}

export interface RecordedRequest {
  /** 'api': the main API listener; 'annotations': api/1 on its own listener (annotationsPort). */
  listener: 'api' | 'annotations' | 'download';
  method: string;
  /** Path and query as received. */
  url: string;
  authorization?: string;
  body?: string;
  /** 0 when dropped (or not answered completely). */
  status: number;
  /** Most API requests in flight at once while it was, itself included: how far a client's window was open. */
  concurrency?: number;
}

export interface Sandbox {
  /** 'http://127.0.0.1:PORT' (no trailing slash, no version). */
  baseUrl: string;
  /** The download listener: another origin (different port). */
  downloadBaseUrl: string;
  /** The publicUrl option, when given: what links and download addresses name. */
  publicUrl?: string;
  /** Where api/1 is served: baseUrl, or the annotations listener's origin with annotationsPort. */
  annotationsUrl: string;
  user: string;
  password: string;
  /** Every request received, in order; tests may reset it with `requests.length = 0`. */
  requests: RecordedRequest[];
  /** The live state. */
  data: SandboxData;
  setFaults(faults: FaultOptions | undefined): void;
  /** Closes the listeners and their open sockets, without waiting for delayed replies. */
  close(): Promise<void>;
}

const FAULT_PROBLEMS: Readonly<Record<Exclude<FaultKind, 'drop' | 'slow'>, [number, string]>> = {
  '429': [429, 'Too many requests: slow down (injected fault)'],
  '500': [500, 'Internal server error (injected fault)'],
  '502': [502, 'Bad gateway (injected fault)'],
  '503': [503, 'Service unavailable (injected fault)'],
};

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function origin(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const host = options.host ?? '127.0.0.1';
  const now = options.now ?? Date.now;
  const data = generateData({
    seed: options.seed ?? 1,
    anchor: options.anchor ?? formatDate(now()),
    conversations: options.conversations ?? DEMO_CONVERSATIONS.default,
    ...(options.dates && { dates: options.dates }),
  });
  const faults = new FaultPlan(options.faults);
  const runtime: Runtime = {
    data,
    baseUrl: '',
    api1BaseUrl: '',
    api1OwnListener: options.annotationsPort !== undefined,
    downloadBaseUrl: '',
    now,
    reportDelayMs: options.reportDelayMs ?? 3000,
    redirectDownloads: () => faults.current.redirectDownloads === true,
    ...(options.live !== undefined && { live: new LiveNight(data, checkedLive(options.live), now()) }),
  };
  const publicUrl = options.publicUrl?.replace(/\/+$/, '');
  const service = new Service(runtime, faults, { ...checkedPace(options), publicUrl, bandwidth: options.bandwidth, sleep: options.sleep });
  const { servers, apiPort, downloadPort, annotationsPort } = await listenAll(service, host, options);
  const listening = origin(host, apiPort);
  runtime.baseUrl = publicUrl ?? listening;
  runtime.downloadBaseUrl = publicUrl ?? origin(host, downloadPort);
  runtime.api1BaseUrl = annotationsPort === undefined ? runtime.baseUrl : origin(host, annotationsPort);
  return {
    baseUrl: listening,
    downloadBaseUrl: origin(host, downloadPort),
    annotationsUrl: runtime.api1BaseUrl,
    ...(publicUrl !== undefined && { publicUrl }),
    user: DEMO_USER,
    password: DEMO_PASSWORD,
    requests: service.requests,
    data,
    setFaults: (next) => faults.set(next),
    async close() {
      service.close();
      await Promise.all(servers.map(stop));
    },
  };
}

function checkedLive(perMinute: number): number {
  if (!(Number.isFinite(perMinute) && perMinute > 0)) throw new RangeError(`live must be a positive number a minute, got ${perMinute}`);
  return perMinute;
}

/** The latency and the rate limit, checked: a bad one is the caller's mistake (a RangeError). */
function checkedPace(options: SandboxOptions): { latencyMs: number; rateLimit: number | undefined } {
  const latencyMs = options.latencyMs ?? 0;
  if (!(Number.isFinite(latencyMs) && latencyMs >= 0)) throw new RangeError(`latencyMs must be a number of milliseconds, got ${latencyMs}`);
  const rateLimit = options.rateLimit;
  if (rateLimit !== undefined && !(Number.isSafeInteger(rateLimit) && rateLimit >= 1))
    throw new RangeError(`rateLimit must be a positive integer, got ${rateLimit}`);
  return { latencyMs, rateLimit };
}

/**
 * Opens the listeners: the API on `port`, the downloads on a free port, api/1 on annotationsPort
 * when given. One that cannot listen closes those already open.
 */
async function listenAll(
  service: Service,
  host: string,
  options: SandboxOptions,
): Promise<{ servers: Server[]; apiPort: number; downloadPort: number; annotationsPort?: number }> {
  const api = service.apiServer('api');
  const downloads = createServer((req, res) => service.serveDownload(req, res));
  const annotations = options.annotationsPort === undefined ? undefined : service.apiServer('annotations');
  const servers = [api, downloads, ...(annotations ? [annotations] : [])];
  const apiPort = await listen(api, options.port ?? 0, host);
  const downloadPort = await listen(downloads, 0, host).catch(async (error: Error) => {
    await stop(api);
    throw error;
  });
  if (!annotations) return { servers, apiPort, downloadPort };
  const annotationsPort = await listen(annotations, options.annotationsPort!, host).catch(async (error: Error) => {
    await Promise.all([stop(api), stop(downloads)]);
    // Says which port was taken: the caller may have given two.
    throw Object.assign(error, { listener: 'annotations' });
  });
  return { servers, apiPort, downloadPort, annotationsPort };
}

function stop(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/**
 * What the listeners do with a request: record it, count it against the rate limit, wait the
 * latency, draw a fault, answer, and send the answer at the link's pace. close() wakes every wait.
 */
class Service {
  /** Every request received, in order. */
  readonly requests: RecordedRequest[] = [];
  /** The API requests in flight: for --rate-limit and for their `concurrency`. */
  private readonly live = new Set<RecordedRequest>();
  /** Pending sleeps (latency, slow faults, trickled downloads): close() wakes them all. */
  private readonly sleepers = new Set<() => void>();
  private closed = false;
  private readonly link: Link | undefined;

  constructor(
    private readonly runtime: Runtime,
    private readonly faults: FaultPlan,
    private readonly settings: {
      latencyMs: number;
      rateLimit: number | undefined;
      publicUrl: string | undefined;
      bandwidth: number | undefined;
      sleep: ((ms: number) => Promise<void>) | undefined;
    },
  ) {
    this.link = settings.bandwidth === undefined ? undefined : new Link(settings.bandwidth, (ms) => this.sleep(ms));
  }

  /** A listener of the API (or of api/1 alone). */
  apiServer(listener: 'api' | 'annotations'): Server {
    const { publicUrl } = this.settings;
    return createServer((req, res) => {
      // Behind a front with one address, the downloads come to the API listener.
      if (publicUrl !== undefined && /^\/(?:downloads|redirect)\//.test(requestTarget(req.url).pathname)) return this.serveDownload(req, res);
      this.serveApi(listener, req, res).catch((error: Error) => {
        if (!res.headersSent && !res.destroyed) sendJson(res, 500, { status: 'error', message: `Internal sandbox error: ${error.message}` });
      });
    });
  }

  /** Ends every wait at once; the replies still pending are not sent. */
  close(): void {
    this.closed = true;
    for (const wake of this.sleepers) wake();
    this.sleepers.clear();
  }

  /** A reply's body on the wire: compressed when asked, paced by the link. */
  private async sendBody(req: IncomingMessage, res: ServerResponse, status: number, headers: Record<string, string>, body: Buffer): Promise<void> {
    const { bytes, headers: coding } = await encodedBody(body, req.headers['accept-encoding']);
    if (this.closed || res.destroyed) return;
    res.writeHead(status, { ...headers, ...coding, 'content-length': String(bytes.length) });
    if (req.method === 'HEAD') return void res.end();
    if (this.link) return this.link.send(res, bytes);
    res.end(bytes);
  }

  private track(listener: RecordedRequest['listener'], req: IncomingMessage, res: ServerResponse): RecordedRequest {
    const record: RecordedRequest = { listener, method: req.method ?? '', url: req.url ?? '', status: 0 };
    if (req.headers.authorization !== undefined) record.authorization = req.headers.authorization;
    this.requests.push(record);
    res.on('finish', () => {
      record.status = res.statusCode;
    });
    return record;
  }

  /** A real timer (or the injected sleep), woken early by close(): callers check `closed` after it. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed) return resolve();
      let timer: NodeJS.Timeout | undefined;
      const wake = (): void => {
        clearTimeout(timer);
        this.sleepers.delete(wake);
        resolve();
      };
      this.sleepers.add(wake);
      if (this.settings.sleep) void this.settings.sleep(ms).then(wake);
      else timer = setTimeout(wake, ms);
    });
  }

  /**
   * Counts the request in flight until its reply is finished or its connection closes, raising
   * the `concurrency` of every request in flight with it; true when it is one too many.
   */
  private overLimit(record: RecordedRequest, res: ServerResponse): boolean {
    const { live } = this;
    live.add(record);
    res.once('close', () => live.delete(record));
    for (const other of live) other.concurrency = Math.max(other.concurrency ?? 0, live.size);
    return this.settings.rateLimit !== undefined && live.size > this.settings.rateLimit;
  }

  private async serveApi(listener: 'api' | 'annotations', req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { faults, runtime } = this;
    const { latencyMs, rateLimit } = this.settings;
    const record = this.track(listener, req, res);
    const refused = this.overLimit(record, res);
    const body = await readBody(req);
    if (body !== '') record.body = body;
    const fault = refused ? undefined : faults.draw();
    const answer = (): JsonReply | 'drop' => {
      runtime.live?.catchUp(runtime.now());
      const reply = answerApi(
        runtime,
        faults,
        { listener, method: req.method ?? '', url: req.url ?? '/', authorization: req.headers.authorization, body },
        runtime.now(),
      );
      return 'drop' in reply ? 'drop' : jsonReply(reply.status, reply.body, reply.headers);
    };
    // A distant service works on concurrent requests side by side: the reply is worked out (and
    // serialized) while the latency runs, not after it, so that one thread does not queue replies
    // behind each other.
    const early = fault === undefined && !refused ? answer() : undefined;
    if (latencyMs > 0) await this.sleep(latencyMs);
    if (this.closed) return;
    if (refused) return sendProblem(res, new HttpProblem(429, `Too many requests: more than ${rateLimit} in flight; retry later`, { 'retry-after': '1' }));
    if (fault === 'drop') return void req.socket.destroy();
    if (fault === 'slow') await this.sleep(faults.current.slowMs ?? 2000);
    else if (fault !== undefined) {
      const [status, message] = FAULT_PROBLEMS[fault];
      const seconds = faults.current.retryAfterSeconds ?? 1;
      const retryAfter = faults.current.retryAfter === 'date' ? new Date(runtime.now() + seconds * 1000).toUTCString() : String(seconds);
      return sendProblem(res, new HttpProblem(status, message, status === 429 ? { 'retry-after': retryAfter } : {}));
    }
    if (this.closed || res.destroyed) return;
    const reply = early ?? answer();
    if (reply === 'drop') return void req.socket.destroy();
    await this.sendBody(req, res, reply.status, { ...reply.headers, 'content-type': 'application/json' }, Buffer.from(reply.text));
  }

  serveDownload(req: IncomingMessage, res: ServerResponse): void {
    const { faults, runtime } = this;
    this.track('download', req, res);
    req.resume();
    // Credentials belong to the API origin only; a client that forwards them here is at fault.
    if (req.headers.authorization !== undefined) {
      return sendProblem(res, new HttpProblem(400, 'Credentials must not be sent to the download host'));
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return sendProblem(res, new HttpProblem(405, `Method ${req.method} is not allowed on downloads`, { allow: 'GET, HEAD' }));
    }
    const path = requestTarget(req.url).pathname;
    if (path.startsWith(`${REDIRECT_PREFIX}/`)) {
      res.writeHead(302, { location: path.slice(REDIRECT_PREFIX.length) });
      return void res.end();
    }
    const id = /^\/downloads\/[^/]+\/([^/.]+)\.[a-z]+$/.exec(path)?.[1];
    const report = id === undefined ? undefined : runtime.data.byId.reports.get(id);
    if (!report || downloadPath(report) !== path || reportState(report, runtime.now()) !== 'generated') {
      return sendProblem(res, new HttpProblem(404, `No download at ${path}`));
    }
    const bytes = reportFileContent(report, report.format);
    const headers = { 'content-type': CONTENT_TYPES[report.format], 'content-disposition': `attachment; filename="report-${report.id}.${report.format}"` };
    const trickleMs = faults.current.trickleDownloadsMs;
    if (!faults.current.breakDownloads && trickleMs === undefined) return void this.sendBody(req, res, 200, headers, bytes).catch(() => res.destroy());
    res.writeHead(200, { ...headers, 'content-length': String(bytes.length) });
    if (req.method === 'HEAD') return void res.end();
    if (faults.current.breakDownloads) return void res.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => req.socket.destroy());
    if (trickleMs !== undefined) return void this.trickle(res, bytes, trickleMs);
  }

  private async trickle(res: ServerResponse, bytes: Buffer, pauseMs: number): Promise<void> {
    for (let at = 0; at < bytes.length && !res.destroyed && !this.closed; at += 1024) {
      res.write(bytes.subarray(at, at + 1024));
      await this.sleep(pauseMs);
    }
    if (!res.destroyed && !this.closed) res.end();
  }
}
