/** `carectl sandbox`: the embedded API in the foreground, for trying commands and scripts offline. */
import type { Command } from 'commander';
import { CarectlError, InterruptedError, UsageError } from '../core/errors.js';
import { parseDuration, parseEnum, parseIntInRange } from '../core/parse.js';
import { DATE_SHAPES, DEMO_CONVERSATIONS } from '../sandbox/size.js';
import type { Action, RawOptions } from '../cli/action.js';
import { addExamples } from '../cli/help.js';
import type { Sandbox, SandboxOptions as SandboxSettings } from '../sandbox/index.js';

/** The flags as given (strings), checked when the sandbox starts. */
interface SandboxOptions {
  port?: string;
  seed?: string;
  conversations?: string;
  dates?: string;
  reportDelay?: string;
  faults?: string;
  latency?: string;
  rateLimit?: string;
  annotationsPort?: string;
  bandwidth?: string;
  publicUrl?: string;
  live?: string;
}

/** A thousand events a second: more than a night's service, still cheap to catch up with. */
const MAX_LIVE_RATE = 60_000;

/** Far above any useful --parallel; the limit is there to be reached. */
const MAX_RATE_LIMIT = 10_000;

export function addSandboxCommand(program: Command, action: Action): void {
  const command = program
    .command('sandbox')
    .description('run the embedded sandbox API with demo data in the foreground (Ctrl-C stops it)')
    .option('--port <n>', 'port to listen on (default: a free port)')
    .option('--seed <n>', 'demo data seed (default: 1)')
    .option('--conversations <n>', `number of demo conversations, ${DEMO_CONVERSATIONS.min}-${DEMO_CONVERSATIONS.max} (default: ${DEMO_CONVERSATIONS.default})`)
    .option('--dates <shape>', `how the demo conversations' sort dates lie: ${DATE_SHAPES.join(', ')} (default: year, the year before today)`)
    .option('--report-delay <duration>', 'time a report takes to generate (default: 3s)')
    .option('--faults <rate>', 'share of requests answered with a transient fault, 0-1 (default: 0)')
    .option('--latency <duration>', 'added to every API reply, as from a distant service (default: none)')
    .option('--rate-limit <n>', `answer 429 with Retry-After: 1 past N requests in flight, 1-${MAX_RATE_LIMIT} (default: no limit)`)
    .option('--annotations-port <n>', 'serve api/1 (annotation types, annotations) on a port of its own, 0 for a free one (default: on --port)')
    .option('--public-url <url>', 'the address of the front it sits behind (nginx, a TLS proxy): its links and download addresses name it (default: its own)')
    .option('--bandwidth <rate>', 'one link all replies share, per second: bits (20mbit, 512kbit) or bytes (2MB, 300KB) (default: no limit)')
    .option('--live <rate>', `a live night: RATE new conversations and messages a minute, 1-${MAX_LIVE_RATE}, moving newest_sort_date (default: none)`);
  addExamples(command, [
    'carectl sandbox --port 8080',
    'carectl sandbox --faults 0.25 --report-delay 10s',
    'carectl sandbox --conversations 100000',
    'carectl sandbox --dates future --conversations 3000',
    'carectl sandbox --latency 150ms --rate-limit 8 --annotations-port 0',
    'carectl sandbox --latency 50ms --bandwidth 20mbit',
    'carectl sandbox --port 8080 --public-url https://carectl.test',
    'carectl sandbox --live 60',
  ]);
  command.action(
    action(
      (raw: RawOptions) => raw as SandboxOptions,
      async (ctx, opts) => {
        const flags = checkedFlags(opts);
        const { parseBandwidth, startSandbox } = await import('../sandbox/index.js');
        const bandwidth = opts.bandwidth === undefined ? undefined : parseBandwidth(opts.bandwidth);
        if (opts.bandwidth !== undefined && bandwidth === undefined)
          throw new UsageError(`--bandwidth: expected a rate such as 20mbit, 512kbit, 2MB or 300KB (per second), got '${opts.bandwidth}'`);
        const sandbox = await startSandbox(settings(flags, bandwidth, ctx.io.now)).catch((err: unknown) => {
          throw listenRefused(err, flags);
        });
        ctx.onClose(() => sandbox.close());
        ctx.io.stdout.stream.write(banner(sandbox, flags));
        await new Promise<void>((resolve) => ctx.io.signal.addEventListener('abort', () => resolve(), { once: true }));
        throw new InterruptedError('sandbox stopped');
      },
    ),
  );
}

/** The flags checked, in the order given above (a usage error names the first bad one); --bandwidth needs the sandbox loaded. */
function checkedFlags(opts: SandboxOptions) {
  return {
    port: opts.port === undefined ? 0 : parseIntInRange(opts.port, '--port', 0, 65535),
    seed: opts.seed === undefined ? 1 : parseIntInRange(opts.seed, '--seed', 0, 2 ** 31 - 1),
    conversations:
      opts.conversations === undefined
        ? DEMO_CONVERSATIONS.default
        : parseIntInRange(opts.conversations, '--conversations', DEMO_CONVERSATIONS.min, DEMO_CONVERSATIONS.max),
    dates: opts.dates === undefined ? undefined : parseEnum(opts.dates, '--dates', DATE_SHAPES),
    reportDelayMs: opts.reportDelay === undefined ? 3000 : parseDuration(opts.reportDelay, '--report-delay'),
    rate: opts.faults === undefined ? 0 : parseRate(opts.faults),
    latencyMs: opts.latency === undefined ? undefined : parseDuration(opts.latency, '--latency'),
    rateLimit: opts.rateLimit === undefined ? undefined : parseIntInRange(opts.rateLimit, '--rate-limit', 1, MAX_RATE_LIMIT),
    annotationsPort: opts.annotationsPort === undefined ? undefined : parseIntInRange(opts.annotationsPort, '--annotations-port', 0, 65535),
    publicUrl: opts.publicUrl === undefined ? undefined : parsePublicUrl(opts.publicUrl),
    live: opts.live === undefined ? undefined : parseIntInRange(opts.live, '--live', 1, MAX_LIVE_RATE),
  };
}

type Flags = ReturnType<typeof checkedFlags>;

/** The sandbox's settings: the flags given, the defaults of startSandbox for the others. */
function settings(flags: Flags, bandwidth: number | undefined, now: () => number): SandboxSettings {
  const { port, seed, conversations, reportDelayMs, dates, rate, latencyMs, rateLimit, annotationsPort, publicUrl, live } = flags;
  return {
    port,
    seed,
    conversations,
    reportDelayMs,
    now,
    ...(dates !== undefined && { dates }),
    ...(rate > 0 && { faults: { rate } }),
    ...(latencyMs !== undefined && { latencyMs }),
    ...(rateLimit !== undefined && { rateLimit }),
    ...(annotationsPort !== undefined && { annotationsPort }),
    ...(bandwidth !== undefined && { bandwidth }),
    ...(publicUrl !== undefined && { publicUrl }),
    ...(live !== undefined && { live }),
  };
}

/**
 * A taken port, or one below 1024 for an ordinary user, is the machine's state, not a mistake in
 * the command line: exit 1, with the way out.
 */
export function listenRefused(err: unknown, flags: Pick<Flags, 'port' | 'annotationsPort'>): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code !== 'EADDRINUSE' && code !== 'EACCES') return err;
  const [flag, port] = (err as { listener?: string }).listener === 'annotations' ? ['--annotations-port', flags.annotationsPort] : ['--port', flags.port];
  return new CarectlError(
    code === 'EADDRINUSE'
      ? `sandbox: port ${port} is already in use; choose another ${flag}, or 0 for a free one`
      : `sandbox: port ${port} needs privileges this user does not have (ports below 1024 are root's, or need CAP_NET_BIND_SERVICE); choose a ${flag} of 1024 or above, or 0 for a free one`,
  );
}

/** Where the sandbox listens, its credentials, and how to point carectl at it. */
function banner(sandbox: Sandbox, flags: Flags): string {
  const { annotationsPort, publicUrl, live } = flags;
  return [
    `carectl sandbox listening on ${sandbox.baseUrl} (report downloads on ${sandbox.downloadBaseUrl})`,
    ...(annotationsPort !== undefined ? [`api/1 (annotation types, annotations) on ${sandbox.annotationsUrl}`] : []),
    ...(publicUrl !== undefined ? [`links and downloads name ${publicUrl}, the front it sits behind (downloads served on ${sandbox.baseUrl} too)`] : []),
    ...(live !== undefined ? [`live: ${live} new conversations and messages a minute`] : []),
    `user: ${sandbox.user}`,
    `password: ${sandbox.password}`,
    '',
    'Use it from another terminal:',
    `  export CARECTL_BASE_URL=${publicUrl ?? sandbox.baseUrl} CARECTL_USER=${sandbox.user} CARECTL_PASSWORD=${sandbox.password}${annotationsPort !== undefined ? ` CARECTL_ANNOTATIONS_URL=${sandbox.annotationsUrl}` : ''}`,
    '  carectl conversations list --status unread',
    '',
  ].join('\n');
}

function parseRate(text: string): number {
  const rate = Number(text);
  if (!/^\d*\.?\d+$/.test(text.trim()) || rate < 0 || rate > 1) throw new UsageError(`--faults: must be a number from 0 to 1 (got "${text}")`);
  return rate;
}

/** An http(s) address with nothing after its path: what the sandbox's links start with. */
function parsePublicUrl(text: string): string {
  const url = URL.canParse(text) ? new URL(text) : undefined;
  // Every link would hand the user name and password to whoever reads it; the error does not repeat them either.
  if (/^[^:]*:[/\\]*[^/\\?#]*@/.test(text.trim()) || (url && (url.username !== '' || url.password !== '')))
    throw new UsageError('--public-url: must not hold a user name or password (user:password@): its links name it to every client');
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '') {
    throw new UsageError(`--public-url: expected an http:// or https:// address such as https://carectl.test (got "${text}")`);
  }
  return url.href.replace(/\/+$/, '');
}
