/**
 * The README's nightly job (`### Nightly jobs`), run as printed, but for the site's two paths (the
 * env file and the job's folder), against the sandbox: twice in one second (a retry, a second cron
 * line), with a conversation moved in between. Both runs keep their export; none is lost.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Sandbox } from '../src/sandbox/index.js';
import { openSandbox, sandboxEnv, scratchFolder } from './helpers.js';
import { describeRun, openShellSession, type ShellSession } from './shell.js';

const README = new URL('../../README.md', import.meta.url);

/** The job's script: the first text block after the heading. */
async function nightlyJob(): Promise<string> {
  const markdown = await readFile(README, 'utf8');
  const section = markdown.slice(markdown.indexOf('### Nightly jobs'));
  const block = /```text\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(block?.startsWith('#!/bin/sh\n'), 'README.md: ### Nightly jobs has its script in a ```text block');
  return block as string;
}

const ids = (csv: string): string[] =>
  csv
    .split('\r\n')
    .slice(1)
    .filter(Boolean)
    .map((line) => line.split(',')[0] as string);

describe("the README's nightly job", () => {
  let sandbox: Sandbox;
  let shell: ShellSession;
  before(async () => {
    sandbox = await openSandbox({ reportDelayMs: 300 });
    shell = await openShellSession(sandbox);
  });
  after(async () => {
    await shell.close();
    await sandbox.close();
  });

  it('run twice in the same second, a conversation moved in between: two exports, every conversation in one of them', async () => {
    const site = scratchFolder('carectl-nightly-');
    const [care, etc, fake] = ['care', 'etc', 'bin'].map((name) => join(site, name)) as [string, string, string];
    for (const folder of [care, etc, fake]) mkdirSync(folder);
    const job = await nightlyJob();
    for (const path of ['/etc/carectl/report.env', '/srv/care']) assert.equal(job.split(path).length, 2, `the job names ${path} once`);
    const script = join(site, 'care-nightly');
    writeFileSync(script, job.replace('/etc/carectl/report.env', join(etc, 'report.env')).replace('/srv/care', care));
    writeFileSync(
      join(etc, 'report.env'),
      Object.entries(sandboxEnv(sandbox))
        .filter(([key]) => key !== 'XDG_CONFIG_HOME')
        .map(([key, value]) => `export ${key}='${value}'\n`)
        .join(''),
    );
    // `date` that says the same second to both runs (the time part of the file names); the rest as date does.
    const date = execFileSync('sh', ['-c', 'command -v date']).toString().trim();
    writeFileSync(join(fake, 'date'), `#!/bin/sh\ncase "$*" in *%H%M%S*) echo 20261207T021500 ;; *) exec ${date} "$@" ;; esac\n`);
    chmodSync(join(fake, 'date'), 0o755);
    const run = async (): Promise<void> => {
      const result = await shell.run(`PATH='${fake}':"$PATH" sh '${script}'`, { timeoutMs: 30_000 });
      assert.equal(result.code, 0, describeRun('care-nightly', result));
    };

    await run();
    const moved = sandbox.data.conversations[3] as Sandbox['data']['conversations'][number];
    moved.newestMs = Math.floor(Date.now() / 1000) * 1000;
    sandbox.data.revision++;
    await run();

    const exports = readdirSync(care)
      .filter((name) => name.startsWith('conversations-'))
      .sort();
    assert.equal(exports.length, 2, readdirSync(care).join(' '));
    assert.ok(exports.every((name) => name.startsWith('conversations-20261207T021500-')));
    const [first, second] = exports.map((name) => ids(readFileSync(join(care, name), 'utf8'))) as [string[], string[]];
    const all = sandbox.data.conversations.map((c) => c.id);
    assert.deepEqual(new Set([...first, ...second]), new Set(all));
    assert.ok(second.includes(moved.id), `the moved conversation ${moved.id} is in the second export`);
    assert.ok(readdirSync(care).some((name) => /^report-\d{4}-\d{2}-\d{2}\.csv$/.test(name)));
  });
});
