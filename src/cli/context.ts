/**
 * What every command gets: injected I/O, the global options, and lazily built services (the
 * settings, the HTTP transport, the in-process sandbox, output writers). Commands stay thin.
 */
import { AuthError, UsageError } from '../core/errors.js';
import type { Io, OutStream } from '../core/io.js';
import { FORMATS, sanitizeForTerminal, terminalMessage, type Format } from '../output/index.js';
import { Printer } from '../output/printer.js';
import { compileQuery, type Query } from '../output/query.js';
import { useColor } from '../output/style.js';
import { liveTicker, withLiveCount, type LiveCount, type LiveTicker } from '../output/progress.js';
import type { RecordWriter } from '../output/types.js';
import { parseDuration, parseEnum, parseIntInRange } from '../core/parse.js';
import { nullPlaceholders, placeholdersInWords, PLACEHOLDER_MODES, VERSIONS } from '../catalogue/index.js';
import { checkBaseUrl } from '../config/base-url.js';
import { Settings } from '../config/settings.js';
import { Transport } from '../http/transport.js';
import { proxyFromEnv, type ProxySettings } from '../http/proxy.js';
import { ApiClient } from '../api/client.js';
import { Scheduler } from '../api/scheduler.js';
import { VERSION } from '../core/version.js';
import type { NamedFile } from './file-options.js';

/** Global options as commander parsed them (strings, unvalidated). */
export interface GlobalOptions {
  output?: string;
  columns?: string;
  header: boolean;
  escapeFormulas: boolean;
  limit?: string;
  pageSize?: string;
  resume?: string;
  resumeFile?: string;
  apiVersion?: string;
  requestTimeout?: string;
  retries?: string;
  verbose?: boolean;
  quiet?: boolean;
  color?: boolean;
  insecureHttp?: boolean;
  baseUrl?: string;
  annotationsUrl?: string;
  user?: string;
  profile?: string;
  sandbox?: boolean;
  parallel?: string;
  outputFile?: string;
  state?: string;
  watch?: boolean;
  interval?: string;
  placeholders?: string;
  query?: string;
}

export const DEFAULT_PAGE_SIZE = 50;
export const DEFAULT_PARALLEL = 8;
export const MIN_PARALLEL = 1;
export const MAX_PARALLEL = 32;
export const MAX_PAGE_SIZE = 50;
const DEFAULT_REQUEST_TIMEOUT = '30s';
const DEFAULT_RETRIES = 3;
const MAX_RETRY_WAIT_MS = 60_000;

export interface Connection {
  baseUrl: URL;
  /** The api/1 form's base address when it lives apart from the base address (the user named it). */
  annotationsUrl?: URL;
  user: string;
  password: string;
}

export class Context {
  readonly settings: Settings;
  /** Transports by base address (and whether Ctrl-C cuts their requests short). */
  private readonly transports = new Map<string, Promise<Transport>>();
  /** Every transport made, for the credentials to redact. */
  private readonly made: Transport[] = [];
  private connectionPromise: Promise<Connection> | undefined;
  private closers: Array<() => Promise<void>> = [];
  private readonly afterOutputSteps: Array<() => Promise<void>> = [];
  private queryPromise: Promise<Query | undefined> | undefined;
  /** Set once parallel() has been read: the transport keeps that many connections (4 when it was not). */
  private parallelValue: number | undefined;

  constructor(
    readonly io: Io,
    readonly globals: GlobalOptions,
  ) {
    this.settings = new Settings({
      io,
      profileName: globals.profile,
      flags: {
        'base-url': globals.baseUrl,
        user: globals.user,
        output: globals.output,
        'api-version': globals.apiVersion,
        'annotations-url': globals.annotationsUrl,
        parallel: globals.parallel,
      },
    });
    if (globals.verbose) this.trace = (line) => io.stderr.stream.write(`${sanitizeForTerminal(line)}\n`);
  }

  /** Checks that must fail a command before it does anything, whatever it goes on to need. */
  checkGlobals(): void {
    // Reading the profile name checks the one given (--profile, CARECTL_PROFILE), file or not.
    void this.settings.profileName;
    void this.placeholderMap;
  }

  /** --placeholders null: the content items' placeholders as null, checked before anything is sent. */
  get placeholderMap(): ((record: Record<string, unknown>) => Record<string, unknown>) | undefined {
    if (this.globals.placeholders === undefined) return undefined;
    parseEnum(this.globals.placeholders, '--placeholders', PLACEHOLDER_MODES);
    return nullPlaceholders;
  }

  // ---- validated global options (each throws a UsageError before anything is sent) ----

  get limit(): number | undefined {
    return this.globals.limit === undefined ? undefined : parseIntInRange(this.globals.limit, '--limit', 1, Infinity);
  }

  get pageSize(): number {
    return this.globals.pageSize === undefined ? DEFAULT_PAGE_SIZE : parseIntInRange(this.globals.pageSize, '--page-size', 1, MAX_PAGE_SIZE);
  }

  get requestTimeoutMs(): number {
    return parseDuration(this.globals.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT, '--request-timeout');
  }

  get retries(): number {
    return this.globals.retries === undefined ? DEFAULT_RETRIES : parseIntInRange(this.globals.retries, '--retries', 0, 10);
  }

  /**
   * The most requests in flight at once (--parallel, CARECTL_PARALLEL, the profile, else 8),
   * checked before anything is sent; a bad value names where it came from.
   */
  async parallel(): Promise<number> {
    const chosen = await this.settings.lookup('parallel');
    const source = chosen?.source.startsWith('profile') ? `parallel in ${chosen.source}` : chosen?.source;
    this.parallelValue = chosen === undefined ? DEFAULT_PARALLEL : parseIntInRange(chosen.value, source as string, MIN_PARALLEL, MAX_PARALLEL);
    return this.parallelValue;
  }

  /** The one concurrency mechanism of the command: up to parallel() requests in flight, adapting to 429s and, by default, to throughput. */
  async scheduler(): Promise<Scheduler> {
    const parallel = await this.parallel();
    // A number the user chose is kept; the default is a ceiling the limiter stays under while more would not pay.
    const adaptive = (await this.settings.lookup('parallel')) === undefined;
    return new Scheduler({ parallel, adaptive, now: this.io.now, sleep: this.io.sleep, signal: this.io.signal, ...(this.trace && { trace: this.trace }) });
  }

  /**
   * --query's compiled expression (undefined without it), loading JMESPath only then; a bad
   * expression, or -o other than json, is exit 2 before anything is sent.
   */
  query(): Promise<Query | undefined> {
    this.queryPromise ??= this.loadQuery();
    return this.queryPromise;
  }

  private async loadQuery(): Promise<Query | undefined> {
    const { query, output } = this.globals;
    if (query === undefined) return undefined;
    // Only the flag: a CARECTL_OUTPUT or profile default gives way, as it does to any flag.
    if (output !== undefined && output !== 'json') throw new UsageError(`--query prints JSON: it does not go with -o ${output}; leave -o out`);
    return compileQuery(query);
  }

  /** The output policy: table on a terminal, tsv otherwise, unless a flag, the environment or the profile says. */
  async printer(): Promise<Printer> {
    return (await this.chosenPrinter()) ?? this.printerFor(this.io.stdout.isTTY ? 'table' : 'tsv');
  }

  /** The printer for a format set by -o, CARECTL_OUTPUT or the profile; undefined when none was. */
  async chosenPrinter(): Promise<Printer | undefined> {
    const query = await this.query();
    if (query) return this.printerFor('json', query);
    const chosen = await this.settings.lookup('output');
    return chosen === undefined ? undefined : this.printerFor(parseEnum(chosen.value, chosen.source, FORMATS));
  }

  private printerFor(format: Format, query?: Query): Printer {
    // A person's table or get never shows a placeholder as data; --placeholders null is for files.
    const map = this.placeholderMap ?? (format === 'table' ? placeholdersInWords : undefined);
    return new Printer(format, {
      out: this.io.stdout,
      header: this.globals.header,
      escapeFormulas: this.globals.escapeFormulas,
      color: useColor(this.globals.color, this.io.env, this.io.stdout),
      signal: this.io.signal,
      project: this.globals.columns !== undefined,
      notice: (message) => this.notice(message),
      ...(map && { map }),
      ...(query && { query }),
    });
  }

  /**
   * The version segment for a resource. `--api-version` must be one the resource exists in. A
   * standing default (CARECTL_API_VERSION or the profile) applies where the resource has that
   * version and is passed over elsewhere: accounts exist only in v1, users only in v1.2.
   */
  async apiVersion<V extends string>(versions: readonly V[], fallback: V): Promise<V> {
    if (this.globals.apiVersion !== undefined) return parseEnum(this.globals.apiVersion, '--api-version', versions);
    const standing = await this.settings.lookup('api-version');
    if (standing === undefined) return fallback;
    // Not a version at all is a mistake to report; a version this resource lacks is passed over.
    const version = parseEnum(standing.value, standing.source, VERSIONS);
    return (versions as readonly string[]).includes(version) ? (version as V) : fallback;
  }

  /** stderr for lines redrawn in place: not a terminal for them where TERM=dumb (no escape sequences, as git reads it). */
  get liveStderr(): OutStream {
    return this.io.env.TERM === 'dumb' ? { ...this.io.stderr, isTTY: false } : this.io.stderr;
  }

  // ---- messages on stderr ----

  /** --verbose: request and reply lines on stderr; undefined without the flag. */
  readonly trace: ((line: string) => void) | undefined;

  /** Progress and notices: suppressed by --quiet. Text from the service is sanitised. */
  notice(message: string): void {
    if (!this.globals.quiet) this.io.stderr.stream.write(`${terminalMessage(sanitizeForTerminal(message), this.io.stderr)}\n`);
  }

  /**
   * A live count on stderr (src/output/progress.ts): of a list's records (liveCount), or of `total`
   * items done (an update batch's ids). Not with --quiet, nor with --verbose, whose trace lines are the progress there.
   */
  liveTicker(noun: string, total: number): LiveTicker {
    const stderr = this.globals.quiet || this.globals.verbose ? { ...this.io.stderr, isTTY: false } : this.liveStderr;
    return liveTicker({ stderr, stdout: this.io.stdout, now: this.io.now, noun, total });
  }

  liveCount(writer: RecordWriter, noun: string): LiveCount {
    if (this.globals.quiet || this.globals.verbose) return { writer, clear: () => undefined };
    return withLiveCount(writer, { stderr: this.liveStderr, stdout: this.io.stdout, now: this.io.now, noun });
  }

  // ---- connection ----

  /** Where to send requests and with which credentials (the sandbox's own with --sandbox). */
  connection(): Promise<Connection> {
    this.connectionPromise ??= this.resolveConnection();
    return this.connectionPromise;
  }

  private async resolveConnection(): Promise<Connection> {
    if (this.globals.sandbox) {
      // The sandbox has its own address and demo user: another one given too is a contradiction.
      const { baseUrl, user, annotationsUrl } = this.globals;
      const conflicting = [baseUrl !== undefined && '--base-url', user !== undefined && '--user', annotationsUrl !== undefined && '--annotations-url'].filter(
        Boolean,
      );
      if (conflicting.length > 0)
        throw new UsageError(`--sandbox: cannot be combined with ${conflicting.join(' or ')}; the sandbox brings its own address and demo credentials`);
      return this.startSandbox();
    }
    const base = await this.settings.lookup('base-url');
    if (base === undefined) {
      // A profile asked for by name that the file lacks is a typo to name, not a missing address.
      const chosen = this.globals.profile !== undefined ? '--profile' : this.io.env.CARECTL_PROFILE ? 'CARECTL_PROFILE' : undefined;
      if (chosen !== undefined) await (await import('../config/profiles.js')).refuseUnknownProfile(this.io, this.settings.profileName, chosen);
      throw new UsageError('no base address: pass --base-url URL, set CARECTL_BASE_URL, or run `carectl login --base-url URL`');
    }
    const baseUrl = checkBaseUrl(base.value, this.globals.insecureHttp === true, base.source);
    const annotations = await this.settings.lookup('annotations-url');
    const annotationsUrl = annotations && checkBaseUrl(annotations.value, this.globals.insecureHttp === true, annotations.source);
    const user = await this.settings.get('user');
    const password = await this.settings.get('password');
    if (!user || !password) {
      // Say which half is missing: a stored user or password belongs to its profile's address, so one may be set and not count.
      const missing = user ? `no password for user "${user}" at` : password ? 'no user name (the password is set) for' : 'no credentials for';
      throw new AuthError(`${missing} ${baseUrl.origin}: for scripts and cron set CARECTL_USER and CARECTL_PASSWORD; people can run \`carectl login\``);
    }
    return { baseUrl, ...(annotationsUrl && annotationsUrl.href !== baseUrl.href && { annotationsUrl }), user, password };
  }

  /**
   * The HTTP transport. With `finishInFlight`, Ctrl-C does not cut its requests short: a batch
   * stops sending new ones and lets those under way finish (a second Ctrl-C still ends at once).
   */
  async transport(options: { finishInFlight?: boolean; path?: string } = {}): Promise<Transport> {
    const { baseUrl, annotationsUrl } = await this.connection();
    // A path of the api/1 form (`carectl api api/1/annotations`, or an address on its host) goes where the API client sends that form.
    const path = options.path ?? '';
    const api1 = annotationsUrl !== undefined && (/^\/?api\/1(\/|\?|$)/.test(path) || (URL.canParse(path) && new URL(path).origin === annotationsUrl.origin));
    return this.transportTo(api1 ? annotationsUrl : baseUrl, options.finishInFlight === true);
  }

  private transportTo(baseUrl: URL, finishInFlight: boolean): Promise<Transport> {
    const key = `${finishInFlight ? 'lasting ' : ''}${baseUrl.href}`;
    let transport = this.transports.get(key);
    if (transport === undefined) {
      transport = this.makeTransport(baseUrl, finishInFlight ? new AbortController().signal : this.io.signal);
      this.transports.set(key, transport);
    }
    return transport;
  }

  /** The proxies of the environment; none for --sandbox, on this machine's loopback (as Go and gh do). */
  proxy(): ProxySettings {
    return this.globals.sandbox ? {} : proxyFromEnv(this.io.env);
  }

  /** A transport to one base address with this command's credentials, retries, trace and clock. */
  private async makeTransport(baseUrl: URL, signal: AbortSignal): Promise<Transport> {
    const { user, password } = await this.connection();
    // Read at the first request, by when a command with requests in parallel has read --parallel.
    const connections = (): number => this.parallelValue ?? 4;
    const transport = new Transport({
      baseUrl,
      user,
      password,
      userAgent: `carectl/${VERSION} (node ${process.version}; ${process.platform})`,
      requestTimeoutMs: this.requestTimeoutMs,
      retries: this.retries,
      get connections() {
        return connections();
      },
      maxRetryWaitMs: MAX_RETRY_WAIT_MS,
      sleep: this.io.sleep,
      now: this.io.now,
      signal,
      proxy: this.proxy(),
      ...(this.io.dispatcher && { dispatcher: this.io.dispatcher }),
      ...(this.trace && { trace: this.trace }),
      notice: (line) => this.notice(line),
    });
    this.made.push(transport);
    this.onClose(() => transport.close());
    return transport;
  }

  /** Every form of the credentials in use (API and proxy), for redacting what is printed. */
  secrets(): string[] {
    return this.made.flatMap((transport) => transport.secrets);
  }

  /** The API client: the api/1 form goes to --annotations-url when it names another address. */
  async api(options: { finishInFlight?: boolean } = {}): Promise<ApiClient> {
    const { baseUrl, annotationsUrl } = await this.connection();
    const finishInFlight = options.finishInFlight === true;
    const main = await this.transportTo(baseUrl, finishInFlight);
    return new ApiClient(main, annotationsUrl ? await this.transportTo(annotationsUrl, finishInFlight) : main, (line) => this.notice(line));
  }

  private async startSandbox(): Promise<Connection> {
    const { startSandbox } = await import('../sandbox/index.js');
    const sandbox = await startSandbox({ now: this.io.now });
    this.onClose(() => sandbox.close());
    return { baseUrl: new URL(sandbox.baseUrl), user: sandbox.user, password: sandbox.password };
  }

  /** --resume-file or CARECTL_RESUME_FILE, as given: a list's pipeline refuses one holding another list's token. */
  resumeFile: NamedFile | undefined;

  /** Runs `step` once the command's output is complete and in place (after -O's rename): a --state commit. */
  afterOutput(step: () => Promise<void>): void {
    this.afterOutputSteps.push(step);
  }

  async outputDone(): Promise<void> {
    for (const step of this.afterOutputSteps.splice(0)) await step();
  }

  onClose(closer: () => Promise<void>): void {
    this.closers.unshift(closer);
  }

  async close(): Promise<void> {
    for (const closer of this.closers.splice(0)) await closer().catch(() => undefined);
  }
}
