/**
 * Bytes and connections (issue 24): an export of 5,000 conversations with their content, its
 * bytes on the wire (carectl asks for gzip) against the same export uncompressed; its wall time
 * over a thin link (`carectl sandbox --latency 50ms --bandwidth 20mbit`) by default and with
 * --parallel 1 against a sequential fetch loop with gzip (fetch asks for it); and the connections
 * opened behind a server that closes each one after 10 requests (nginx's keepalive_requests).
 * Bytes and connections are counted by a reverse proxy in front of the sandbox (its links name
 * the proxy: --public-url), which can also drop Accept-Encoding (the export as it was before).
 */
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { join } from 'node:path';
import { sandboxOptions, startSandboxServer, timeNode } from './lib/processes.js';
import { limitRow, median, ms, ratioRow, skippedRow, speedupRow } from './lib/table.js';

const RECORDS = 5_000;
const FIELDS = 'status,is_priority,contains_private,tags,author,channels,assigned_to,handling_times,close_reason';
const mb = (bytes) => `${(bytes / 1e6).toFixed(2)} MB`;
const count = (n) => `${n}`;
const firstPages = () =>
  ['true', 'false'].map(
    (priority) => `v1.3/conversations?${new URLSearchParams({ is_priority: priority, fields: FIELDS, include: 'content', page_size: '50' })}`,
  );

/**
 * A reverse proxy to the sandbox: bytes sent to the client (headers and bodies), connections and
 * requests; `closeEvery` requests a connection then closes; `identity` drops Accept-Encoding.
 */
async function countingProxy() {
  const state = { upstream: undefined, closeEvery: 0, identity: false, bytes: 0, connections: 0, requests: 0 };
  const server = createServer((req, res) => {
    state.requests++;
    const socket = req.socket;
    socket.served = (socket.served ?? 0) + 1;
    const headers = { ...req.headers };
    if (state.identity) delete headers['accept-encoding'];
    const upstream = request(new URL(req.url, state.upstream), { method: req.method, headers }, (reply) => {
      const close = state.closeEvery > 0 && socket.served >= state.closeEvery;
      res.writeHead(reply.statusCode ?? 502, { ...reply.headers, ...(close && { connection: 'close' }) });
      reply.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('connection', (socket) => {
    state.connections++;
    socket.on('close', () => (state.bytes += socket.bytesWritten));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    state,
    reset(settings) {
      Object.assign(state, { bytes: 0, connections: 0, requests: 0, ...settings });
    },
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export async function wireMeasures({ entry, env, scratch, runs, interleaved }) {
  const carectl = (...args) => [entry, ...args];
  const options = await sandboxOptions(entry);
  const lines = (file) => readFileSync(file, 'utf8').split('\n').length - 1;
  const exportArgs = ['conversations', 'list', '-o', 'ndjson', '--include', 'content', '--fields', FIELDS];
  const rows = [];
  if (!options.has('--public-url') || !options.has('--bandwidth')) {
    const note = 'this `carectl sandbox` has no --public-url or --bandwidth (they come with issue 24)';
    for (const measure of ['wire: 5k export with content, bytes', 'thin link: 5k export with content', 'connections: server closing every 10 requests'])
      rows.push(skippedRow(measure, '–', note));
    return rows;
  }

  const proxy = await countingProxy();
  const behind = await startSandboxServer(entry, { conversations: RECORDS, args: ['--public-url', proxy.url] });
  proxy.state.upstream = behind.listening;
  try {
    const all = { env: { ...env, ...behind.env } };
    // A connection is closed only once its last reply went out: the proxy's byte count is whole then.
    const settle = () => new Promise((resolve) => setTimeout(resolve, 200));
    const measure = async (name, settings, extra = []) => {
      proxy.reset(settings);
      await timeNode(carectl(...exportArgs, ...extra), { ...all, stdout: join(scratch, `${name}.out`) });
      await settle();
      if (lines(join(scratch, `${name}.out`)) !== RECORDS) throw new Error(`the ${name} export missed records`);
      return { ...proxy.state };
    };
    const gzip = await measure('wireGzip', {});
    const plain = await measure('wirePlain', { identity: true });
    rows.push({
      ...ratioRow(`wire: ${RECORDS / 1000}k export with content, bytes (gzip vs not)`, gzip.bytes, plain.bytes, 0.2, mb),
      note: `${gzip.requests} requests, ${gzip.connections} connections`,
    });
    const closing = await measure('wireClosing', { closeEvery: 10 }, ['--parallel', '1', '--page-size', '20']);
    rows.push({
      ...limitRow(
        'connections: server closing every 10 requests (--parallel 1 --page-size 20)',
        closing.connections,
        Math.ceil(closing.requests / 10) + 1,
        count,
      ),
      note: `${closing.requests} requests`,
    });
  } finally {
    await behind.stop();
    await proxy.close();
  }

  const thin = await startSandboxServer(entry, { conversations: RECORDS, latencyMs: 50, args: ['--bandwidth', '20mbit'] });
  try {
    const all = { env: { ...env, ...thin.env } };
    const toFile = (name) => ({ ...all, stdout: join(scratch, `${name}.out`) });
    const r = await interleaved(
      Math.min(runs, 3),
      {
        thinCarectl: carectl(...exportArgs),
        thinOne: carectl(...exportArgs, '--parallel', '1'),
        thinLoop: ['bench/baselines/fetch-loop.js', ...firstPages()],
      },
      { thinCarectl: toFile('thinCarectl'), thinOne: toFile('thinOne'), thinLoop: toFile('thinLoop') },
    );
    for (const name of ['thinCarectl', 'thinOne', 'thinLoop'])
      if (lines(join(scratch, `${name}.out`)) !== RECORDS) throw new Error(`the ${name} export missed records`);
    const t = (name) => median(r[name].map((x) => x.ms));
    rows.push(speedupRow(`50 ms + 20 Mbit/s: ${RECORDS / 1000}k export with content vs gzip fetch loop`, t('thinCarectl'), t('thinLoop'), 3, ms));
    rows.push({
      ...ratioRow(`50 ms + 20 Mbit/s: same, --parallel 1 vs gzip fetch loop`, t('thinOne'), t('thinLoop'), 1.1, ms),
      note: 'one request at a time, both compressed: no slower than the loop',
    });
  } finally {
    await thin.stop();
  }
  return rows;
}
