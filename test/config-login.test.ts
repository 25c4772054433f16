/**
 * `login` on a terminal asks for what it was not given (base address, user, password) with the
 * line editing of any shell prompt; Ctrl-C, Ctrl-D and a stop signal end it cleanly.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import type { Sandbox } from '../src/sandbox/index.js';
import { apiRequests, runCli, type RunResult, useConfigHome } from './helpers.js';

const LEFT = '\u001b[D';
const HOME = '\u001b[H';
const END = '\u001b[F';
const ERASE = '\u007f';
const CTRL_C = '\u0003';
const CTRL_D = '\u0004';

let sandbox: Sandbox;
let home: string;
let configFile: string;
useConfigHome('carectl-login-', (fixture) => ({ sandbox, home, configFile } = fixture));

/** A terminal's input: keys are written to it; raw mode switches are recorded. */
class FakeTerminal extends PassThrough {
  readonly isTTY = true;
  isRaw = false;
  readonly rawModes: boolean[] = [];
  setRawMode(raw: boolean): this {
    this.isRaw = raw;
    this.rawModes.push(raw);
    return this;
  }
}

interface TerminalRun extends RunResult {
  rawModes: boolean[];
  /** The questions asked, in order. */
  asked: string[];
}

const QUESTION = /(base address \(https:\/\/host\)|user for \S+|password for \S+): /g;

/**
 * Keys one at a time, as a terminal sends what a person types (an escape sequence is one key).
 * One chunk with a line ending in it would be taken by readline as pasted text.
 */
async function type(terminal: FakeTerminal, keys: string): Promise<void> {
  for (const key of keys.match(/\u001b\[[0-9;]*[A-Za-z~]|[^]/gu) ?? []) {
    await new Promise((resolve) => setImmediate(resolve));
    terminal.write(key);
  }
}

/**
 * carectl with stdin and stderr on a terminal: each question asked is answered with the next
 * keys, typed once the question shows (as a person would). login never asks one question twice
 * in a row.
 */
async function onTerminal(
  argv: string[],
  keys: string[],
  options: { onQuestion?: (question: string) => void; signal?: AbortSignal; stderrTTY?: boolean } = {},
): Promise<TerminalRun> {
  const terminal = new FakeTerminal();
  const asked: string[] = [];
  let shown = '';
  const result = await runCli(argv, {
    stdin: terminal,
    stdinTTY: true,
    stderrTTY: options.stderrTTY ?? true,
    env: { XDG_CONFIG_HOME: home },
    ...(options.signal && { signal: options.signal }),
    onStderr: (chunk) => {
      shown += chunk;
      for (const match of shown.matchAll(QUESTION)) {
        // readline draws the question again each time it redraws the line
        if (match[1] === asked.at(-1)) continue;
        asked.push(match[1] as string);
        options.onQuestion?.(match[1] as string);
        const typed = keys.shift();
        if (typed !== undefined) void type(terminal, typed);
      }
      shown = shown.replace(QUESTION, '');
    },
  });
  return { ...result, rawModes: terminal.rawModes, asked };
}

function stored(): unknown {
  return JSON.parse(readFileSync(configFile, 'utf8'));
}

/** Every switch to raw mode was switched back. */
function assertRestored(rawModes: boolean[]): void {
  assert.ok(rawModes.length > 0, 'the terminal went to raw mode');
  assert.equal(rawModes.at(-1), false, 'the terminal is back in its normal mode');
}

describe('login on a terminal', () => {
  it('asks for the base address, user and password it was not given; arrow keys edit the line, never end up in it', async () => {
    const password = sandbox.password;
    const sent = sandbox.requests.length;
    const result = await onTerminal(
      ['login'],
      [
        // typed without the scheme, then Home to add it, End to go on
        `${sandbox.baseUrl.slice('http://'.length, -1)}${HOME}http://${END}${sandbox.baseUrl.slice(-1)}\r`,
        // "dmo", two steps left, "e": demo
        `dmo${LEFT}${LEFT}e\r`,
        // a stray X before the last character, removed by going left and erasing
        `${password.slice(0, -1)}X${password.slice(-1)}${LEFT}${ERASE}\r`,
      ],
    );
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(result.asked, ['base address (https://host)', `user for ${sandbox.baseUrl}`, 'password for demo']);
    assert.deepEqual(stored(), { profiles: { default: { 'base-url': sandbox.baseUrl, user: 'demo', password } } });
    assert.equal(apiRequests(sandbox, sent).length, 1);
    assert.ok(!result.stderr.includes(password.slice(0, 6)), 'nothing of the password is echoed');
    assert.match(result.stderr, /logged in to http:\/\/127\.0\.0\.1:\d+ as demo/);
    assertRestored(result.rawModes);
  });

  it('asks only for what was not given', async () => {
    const result = await onTerminal(['login', '--user', sandbox.user], [`${sandbox.baseUrl}\r`, `${sandbox.password}\r`]);
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(result.asked, ['base address (https://host)', 'password for demo']);
  });

  it('checks the address typed as it checks --base-url (exit 2, nothing sent or stored)', async () => {
    const sent = sandbox.requests.length;
    const result = await onTerminal(['login'], ['http://api.example.com\r']);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /carectl: base address: refusing plain http to api\.example\.com/);
    assert.equal(sandbox.requests.length, sent);
    assert.equal(existsSync(configFile), false);
  });

  for (const [at, answered] of [
    ['the base address', 0],
    ['the user', 1],
    ['the password', 2],
  ] as const) {
    it(`stops at Ctrl-C at ${at} (exit 130), restores the terminal, sends and stores nothing`, async () => {
      const sent = sandbox.requests.length;
      const answers = [`${sandbox.baseUrl}\r`, 'demo\r'].slice(0, answered);
      const result = await onTerminal(['login'], [...answers, `typed${CTRL_C}`]);
      assert.equal(result.code, 130, result.stderr);
      assert.equal(result.asked.length, answered + 1);
      assertRestored(result.rawModes);
      assert.equal(sandbox.requests.length, sent);
      assert.equal(existsSync(configFile), false);
    });
  }

  it('ends at Ctrl-D on an empty line (exit 2): the input ended before an answer', async () => {
    const result = await onTerminal(['login', '--base-url', sandbox.baseUrl], [CTRL_D]);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /carectl: login: the input ended before an answer was given\n$/);
    assertRestored(result.rawModes);
    assert.equal(existsSync(configFile), false);
  });

  it('stops at a stop signal (SIGTERM) while asking (exit 130) and restores the terminal', async () => {
    const controller = new AbortController();
    const result = await onTerminal(['login', '--base-url', sandbox.baseUrl, '--user', 'demo'], [], {
      onQuestion: () => setTimeout(() => controller.abort(), 50),
      signal: controller.signal,
    });
    assert.equal(result.code, 130, result.stderr);
    assert.deepEqual(result.asked, ['password for demo']);
    assertRestored(result.rawModes);
    assert.equal(existsSync(configFile), false);
  });

  it('asks for no address or user when stderr is not a terminal (the question would not be seen)', async () => {
    const noBase = await onTerminal(['login'], [], { stderrTTY: false });
    assert.equal(noBase.code, 2);
    assert.equal(noBase.stderr, 'carectl: login: give the service address with --base-url URL (or CARECTL_BASE_URL)\n');
    const noUser = await onTerminal(['login', '--base-url', sandbox.baseUrl], [], { stderrTTY: false });
    assert.equal(noUser.code, 2);
    assert.equal(noUser.stderr, 'carectl: login: no terminal to ask for the user; give it with --user NAME (or CARECTL_USER)\n');
  });
});
