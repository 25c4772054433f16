/** When and how long to wait before another attempt (src/http/retry.ts), without a network. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isNeverSentError, MIN_RETRY_SPAN_MS, parseRetryAfter, RETRYABLE_STATUSES, retryDelayMs, type RetryDelayInput } from '../src/http/retry.js';

const NOW = Date.UTC(2026, 5, 30, 12, 0, 0);
const CAP = 60_000;

function delay(overrides: Partial<RetryDelayInput>): number | 'too-long' {
  return retryDelayMs({ attempt: 0, retryAfter: undefined, now: NOW, capMs: CAP, random: () => 0.5, ...overrides });
}

describe('RETRYABLE_STATUSES', () => {
  test('throttling and transient server errors only', () => {
    assert.deepEqual([...RETRYABLE_STATUSES].sort(), [429, 500, 502, 503, 504]);
    for (const status of [400, 401, 403, 404, 405, 409, 422, 501]) assert.equal(RETRYABLE_STATUSES.has(status), false, String(status));
  });
});

describe('retryDelayMs without Retry-After: exponential backoff with full jitter', () => {
  test('the ceiling doubles with each attempt from 500 ms', () => {
    const ceilings = [0, 1, 2, 3, 4].map((attempt) => delay({ attempt, random: () => 1 }));
    assert.deepEqual(ceilings, [500, 1000, 2000, 4000, 8000]);
  });

  test('full jitter: anywhere from 0 to the ceiling, as the random draw says', () => {
    assert.equal(delay({ attempt: 2, random: () => 0 }), 0);
    assert.equal(delay({ attempt: 2, random: () => 0.25 }), 500);
    assert.equal(delay({ attempt: 2, random: () => 0.5 }), 1000);
  });

  test('the cap bounds the ceiling however many attempts were made', () => {
    assert.equal(delay({ attempt: 10, random: () => 1 }), CAP);
    assert.equal(delay({ attempt: 30, random: () => 1 }), CAP);
    assert.equal(delay({ attempt: 10, random: () => 1, capMs: 5000 }), 5000);
  });
});

describe('retryDelayMs: the waits of the default 3 retries come to at least 5 s', () => {
  /** The waits of `retries` retries that all fail, with a fixed random draw. */
  function schedule(retries: number, random: () => number, capMs = CAP): number[] {
    const waits: number[] = [];
    for (let attempt = 0; attempt < retries; attempt++) {
      const wait = delay({ attempt, retries, waitedMs: waits.reduce((a, b) => a + b, 0), random, capMs });
      assert.equal(typeof wait, 'number');
      waits.push(wait as number);
    }
    return waits;
  }
  const sum = (waits: number[]): number => waits.reduce((a, b) => a + b, 0);

  test('the last retry makes up what the jittered waits before it fell short of 5 s, plus its own jitter', () => {
    assert.equal(MIN_RETRY_SPAN_MS, 5000);
    assert.deepEqual(
      schedule(3, () => 0),
      [0, 0, 5000],
    );
    assert.deepEqual(
      schedule(3, () => 1),
      [500, 1000, 5500],
    );
    assert.deepEqual(
      schedule(3, () => 0.5),
      [250, 500, 5250],
    );
  });

  test('whatever the draws, 3 retries wait 5 s or more in all, and at most 7 s', () => {
    let seed = 7;
    const random = (): number => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let run = 0; run < 200; run++) {
      const total = sum(schedule(3, random));
      assert.ok(total >= 5000 && total <= 7000, String(total));
    }
  });

  test('one retry waits the 5 s itself; more retries than needed add nothing to reach it', () => {
    assert.deepEqual(
      schedule(1, () => 0),
      [5000],
    );
    assert.deepEqual(
      schedule(6, () => 1),
      [500, 1000, 2000, 4000, 8000, 16_000],
    );
  });

  test('the cap bounds the last wait too', () => {
    assert.deepEqual(
      schedule(3, () => 0, 2000),
      [0, 0, 2000],
    );
  });

  test('without `retries` no wait is taken for the last', () => {
    assert.equal(delay({ attempt: 2, random: () => 0 }), 0);
  });
});

describe('retryDelayMs with Retry-After', () => {
  test('delta-seconds are waited exactly, without jitter', () => {
    assert.equal(delay({ retryAfter: '7', random: () => 0 }), 7000);
    assert.equal(delay({ retryAfter: '0' }), 0);
    assert.equal(delay({ retryAfter: ' 3 ', attempt: 5 }), 3000);
  });

  test('an HTTP-date is waited until', () => {
    assert.equal(delay({ retryAfter: new Date(NOW + 42_000).toUTCString() }), 42_000);
    assert.equal(delay({ retryAfter: 'Tue, 30 Jun 2026 12:00:05 GMT' }), 5000);
  });

  test('an HTTP-date in the past means: retry now', () => {
    assert.equal(delay({ retryAfter: new Date(NOW - 10_000).toUTCString() }), 0);
  });

  test('a wait up to the cap is honoured; beyond it the answer is too-long', () => {
    assert.equal(delay({ retryAfter: '60' }), 60_000);
    assert.equal(delay({ retryAfter: '61' }), 'too-long');
    assert.equal(delay({ retryAfter: '3600' }), 'too-long');
    assert.equal(delay({ retryAfter: new Date(NOW + 2 * 3600_000).toUTCString() }), 'too-long');
  });

  test('a Retry-After that is neither form falls back to the backoff', () => {
    for (const value of ['soon', '', '1.5', '-5', '12abc']) {
      assert.equal(delay({ retryAfter: value, attempt: 1, random: () => 1 }), 1000, JSON.stringify(value));
    }
  });
});

describe('parseRetryAfter', () => {
  test('seconds and dates to milliseconds; anything else is undefined', () => {
    assert.equal(parseRetryAfter(undefined, NOW), undefined);
    assert.equal(parseRetryAfter('120', NOW), 120_000);
    assert.equal(parseRetryAfter(new Date(NOW + 1000).toUTCString(), NOW), 1000);
    // Numbers that are not delta-seconds must not be read as dates (V8 parses "1.5" as 2001-01-05).
    assert.equal(parseRetryAfter('1.5', NOW), undefined);
    assert.equal(parseRetryAfter('-5', NOW), undefined);
    assert.equal(parseRetryAfter('2', NOW + 1), 2000);
  });
});

describe('isNeverSentError', () => {
  const withCode = (code: string): Error => Object.assign(new Error(code), { code });

  test('failures before a byte left: refused, unresolvable, unreachable, connect timeout', () => {
    for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'EHOSTUNREACH', 'ENETUNREACH']) {
      assert.equal(isNeverSentError(withCode(code)), true, code);
    }
  });

  test('the code may sit on the cause (fetch-style wrapping)', () => {
    assert.equal(isNeverSentError(new TypeError('fetch failed', { cause: withCode('ECONNREFUSED') })), true);
  });

  test('failures after the request may have arrived are not never-sent', () => {
    for (const code of ['ECONNRESET', 'UND_ERR_SOCKET', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'EPIPE']) {
      assert.equal(isNeverSentError(withCode(code)), false, code);
    }
    assert.equal(isNeverSentError(new DOMException('timed out', 'TimeoutError')), false);
    assert.equal(isNeverSentError(undefined), false);
  });
});
