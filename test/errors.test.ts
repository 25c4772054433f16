/**
 * Typed failures (issue 37): a class says what happened, and what callers decide on (resume,
 * retry, a script's `error.kind`, "may have been applied") is a property, not the class tree.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LinkElsewhereError } from '../src/http/link-elsewhere.js';
import {
  ApiError,
  BadReplyError,
  CarectlError,
  DeadlineError,
  exchangeFailed,
  ExitCode,
  failureKind,
  InterruptedError,
  ListStoppedError,
  mayHaveBeenApplied,
  NetworkError,
  UsageError,
} from '../src/core/errors.js';

describe('failures say what happened', () => {
  test('a bad reply, a passed deadline and a link elsewhere are not network errors, yet the exchange failed for each', () => {
    const cases: [CarectlError, string | undefined][] = [
      [new NetworkError('reset', true), 'no answer'],
      [new BadReplyError('not JSON'), 'bad reply'],
      [new DeadlineError('no answer in the time given'), 'deadline'],
      [new LinkElsewhereError(new URL('http://a/'), new URL('http://b/')), 'elsewhere'],
      [new ApiError(503, 'down'), undefined],
      [new UsageError('--limit: not a number'), undefined],
    ];
    for (const [err, exchange] of cases) {
      assert.equal(err.exchange, exchange, err.name);
      assert.equal(exchangeFailed(err), exchange !== undefined, err.name);
    }
    assert.ok(!(new BadReplyError('x') instanceof NetworkError));
    assert.ok(!(new DeadlineError('x') instanceof NetworkError));
    assert.ok(!(new LinkElsewhereError(new URL('http://a/'), new URL('http://b/')) instanceof NetworkError));
    assert.equal(exchangeFailed(new Error('plain')), false);
  });

  test("exit codes and update rows' error.kind are as before", () => {
    const errs = [
      new NetworkError('x', false),
      new BadReplyError('x'),
      new DeadlineError('x'),
      new LinkElsewhereError(new URL('http://a/'), new URL('http://b/')),
    ];
    assert.deepEqual(
      errs.map((e) => [e.name, e.exitCode, failureKind(e)]),
      errs.map((e) => [e.name, ExitCode.failure, 'network']),
    );
  });

  test('"may have been applied" is read from the error, whatever its class', () => {
    assert.equal(mayHaveBeenApplied(new BadReplyError('x', { mayHaveBeenApplied: true })), true);
    assert.equal(mayHaveBeenApplied(new NetworkError('x', true, { mayHaveBeenApplied: true })), true);
    assert.equal(mayHaveBeenApplied(new ApiError(502, 'x', { mayHaveBeenApplied: true })), true);
    assert.equal(mayHaveBeenApplied(new BadReplyError('x')), false);
    assert.equal(mayHaveBeenApplied(new Error('x')), false);
  });

  test('a cause is kept', () => {
    const cause = new Error('ENOSPC');
    assert.equal(new CarectlError('cannot write', ExitCode.failure, { cause }).cause, cause);
    assert.equal('cause' in new CarectlError('no cause'), false);
  });

  test('a list that stopped wraps its cause, unchanged, and exits as the cause would', () => {
    for (const [cause, code] of [
      [new ApiError(404, 'gone'), ExitCode.notFound],
      [new ApiError(401, 'who'), ExitCode.auth],
      [new NetworkError('reset', false), ExitCode.failure],
      [new InterruptedError(), ExitCode.interrupted],
    ] as const) {
      const stopped = new ListStoppedError(cause, '; the list stopped after 2 records', 'TOKEN');
      assert.equal(stopped.exitCode, code);
      assert.equal(stopped.message, `${cause.message}; the list stopped after 2 records`);
      assert.equal(stopped.cause, cause);
      assert.equal(stopped.resumeToken, 'TOKEN');
      assert.ok(!cause.message.includes('stopped'), 'the cause is not edited');
    }
  });
});
