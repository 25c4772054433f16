/**
 * A client with fixed credentials against a scripted server (test/scripted-server.ts): the
 * transport with a fake clock and a trace, or carectl itself; and a check that output holds none
 * of those credentials. Shared by the retries, replies, errors and secrets tests.
 */
import assert from 'node:assert/strict';
import type { Transport, TransportConfig } from '../src/http/transport.js';
import { fakeClock, runCli, type RunResult } from './helpers.js';
import { serve, testTransport, type Served } from './scripted-server.js';

export const USER = 'agent@example.com';
export const PASSWORD = 'pa55-w0rd:with/odd?chars';
export const BASE64 = Buffer.from(`${USER}:${PASSWORD}`).toString('base64');

/** Runs `body` with a transport (fake clock, fixed credentials, a trace) against a scripted server, closing both afterwards. */
export async function withTransport(
  handler: Parameters<typeof serve>[0],
  body: (t: Transport, server: Served, clock: ReturnType<typeof fakeClock>, trace: string[]) => Promise<void>,
  overrides: Partial<TransportConfig> = {},
): Promise<void> {
  const server = await serve(handler);
  const clock = fakeClock();
  const trace: string[] = [];
  const transport = testTransport(server.url, clock, { user: USER, password: PASSWORD, trace: (line) => trace.push(line), ...overrides });
  try {
    await body(transport, server, clock, trace);
  } finally {
    await transport.close();
    await server.close();
  }
}

/** carectl against a scripted server, with a fake clock. */
export async function cliAgainst(url: string, argv: string[], env: Record<string, string> = {}): Promise<RunResult & { slept: number[] }> {
  const clock = fakeClock();
  const result = await runCli(argv, {
    env: { CARECTL_BASE_URL: url, CARECTL_USER: USER, CARECTL_PASSWORD: PASSWORD, ...env },
    now: clock.now,
    sleep: clock.sleep,
  });
  return { ...result, slept: clock.slept };
}

/** Fails if `text` holds any form of the credentials above. */
export function assertNoCredential(text: string): void {
  for (const secret of [PASSWORD, BASE64, encodeURIComponent(PASSWORD), 'hunter2']) assert.ok(!text.includes(secret), `printed a credential: ${text}`);
}

/** carectl sent once (--retries 0) with placeholder credentials and a fake clock; `env` names the service. */
export function cliOnce(argv: string[], env: Record<string, string>): ReturnType<typeof runCli> {
  const clock = fakeClock();
  return runCli(['--retries', '0', ...argv], { env: { CARECTL_USER: 'u', CARECTL_PASSWORD: 'p', ...env }, now: clock.now, sleep: clock.sleep });
}
