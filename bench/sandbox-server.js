/**
 * The sandbox in a process of its own, so its CPU time is not charged to the client under test.
 * `carectl sandbox` has no conversation-count flag, hence this wrapper around startSandbox().
 *
 *   node bench/sandbox-server.js [--conversations N] [--report-delay-ms MS]
 *
 * Prints one JSON line {baseUrl, user, password} once listening; stops on SIGTERM/SIGINT.
 * Started with an IPC channel, it answers the message 'stats' with the number of requests it has
 * received and when the newest report created through the API became (or becomes) ready.
 */
import { parseArgs } from 'node:util';
import { startSandbox } from '../dist/src/sandbox/index.js';

const { values } = parseArgs({
  options: {
    conversations: { type: 'string', default: '600' },
    'report-delay-ms': { type: 'string', default: '3000' },
  },
});

const sandbox = await startSandbox({
  port: 0,
  conversations: Number(values.conversations),
  reportDelayMs: Number(values['report-delay-ms']),
});

process.on('message', (message) => {
  if (message !== 'stats') return;
  // Seeded reports are "settled"; the ones created through the API carry their real lifecycle.
  const created = sandbox.data.reports.filter((report) => !report.settled);
  process.send({ requests: sandbox.requests.length, readyAt: created.at(-1)?.doneMs ?? null });
});

const stop = () => void sandbox.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

process.stdout.write(`${JSON.stringify({ baseUrl: sandbox.baseUrl, user: sandbox.user, password: sandbox.password })}\n`);
