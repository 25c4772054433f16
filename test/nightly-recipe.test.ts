/**
 * The README's cron report (`### A nightly report from cron`) and its nightly and weekly jobs
 * (`### Nightly jobs`), run as printed, but for the site's two paths (the env file and the job's
 * folder), against the sandbox, with `date` pinned to one day and one second: the cron report saved,
 * or exit 3 named; the reports of the nights not made yet, each once; two runs in one second with a
 * conversation moved in between, both exports kept; exit 3 kept when the credentials are refused;
 * and the SQLite loads printed there, with a weekly full export that brings in what an incremental
 * run cannot see (a status changed without a new message, a deleted conversation).
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Sandbox } from '../src/sandbox/index.js';
import { freePort, openSandbox, sandboxEnv, scratchFolder } from './helpers.js';
import { describeRun, openShellSession, type ShellResult, type ShellSession } from './shell.js';

const README = new URL('../../README.md', import.meta.url);
/** The day the jobs run on (the fake `date` says it): today, so the sandbox's reports are of days it knows. */
const TODAY = new Date().toISOString().slice(0, 10);
const DAY_MS = 86_400_000;
const daysAgo = (days: number): string => new Date(Date.parse(`${TODAY}T12:00:00Z`) - days * DAY_MS).toISOString().slice(0, 10);

/** The fenced blocks of the section, their list indentation taken off. */
async function nightlySection(): Promise<string[]> {
  const markdown = await readFile(README, 'utf8');
  const start = markdown.indexOf('### Nightly jobs');
  const section = markdown.slice(start, markdown.indexOf('\n## ', start));
  return [...section.matchAll(/^( *)```\w*\n([\s\S]*?)^\1```$/gm)].map(([, indent, body]) =>
    (body as string)
      .split('\n')
      .map((line) => line.slice((indent as string).length))
      .join('\n'),
  );
}

/** The jobs and the load line of the section: the scripts in order, the block that starts with sqlite3. */
async function recipes(): Promise<{ nightly: string; weekly: string; load: (file: string) => string }> {
  const blocks = await nightlySection();
  const [nightly, weekly] = blocks.filter((block) => block.startsWith('#!/bin/sh\n'));
  const load = blocks.find((block) => block.startsWith('sqlite3 '));
  assert.ok(nightly && weekly && load, 'README.md: ### Nightly jobs has the nightly and the weekly script and the load line');
  assert.equal(load.split('FILE').length, 2, 'the load line names FILE once');
  return { nightly, weekly, load: (file) => load.replace('FILE', file) };
}

/** The script of `### A nightly report from cron`. */
async function cronReport(): Promise<string> {
  const markdown = await readFile(README, 'utf8');
  const section = markdown.slice(markdown.indexOf('### A nightly report from cron'));
  const script = /```text\n(#!\/bin\/sh\n[\s\S]*?)```/.exec(section)?.[1];
  assert.ok(script, 'README.md: ### A nightly report from cron has its script in a ```text block');
  return script;
}

const csvIds = (csv: string): string[] =>
  csv
    .split('\r\n')
    .slice(1)
    .filter(Boolean)
    .map((line) => line.split(',')[0] as string);

type Conversation = Sandbox['data']['conversations'][number];

/** A site for the jobs: the job's folder, its env file (the sandbox's, or `password`), a `date` that says TODAY and 02:15:00. */
function site(sandbox: Sandbox, shell: ShellSession, password?: string): { care: string; run: (script: string) => Promise<ShellResult> } {
  const root = scratchFolder('carectl-nightly-');
  const [care, etc, fake] = ['care', 'etc', 'bin'].map((name) => join(root, name)) as [string, string, string];
  for (const folder of [care, etc, fake]) mkdirSync(folder);
  const env = { ...sandboxEnv(sandbox), ...(password === undefined ? {} : { CARECTL_PASSWORD: password }) };
  writeFileSync(
    join(etc, 'report.env'),
    Object.entries(env)
      .filter(([key]) => key !== 'XDG_CONFIG_HOME')
      .map(([key, value]) => `export ${key}='${value}'\n`)
      .join(''),
  );
  const date = execFileSync('sh', ['-c', 'command -v date']).toString().trim();
  // `date -u +%Y%m%dT%H%M%S` (the run's name) and `date -u -d "N days ago" +%F` (a report's day) as of TODAY; anything else as date does.
  writeFileSync(
    join(fake, 'date'),
    `#!/bin/sh\ncase "$*" in *%H%M%S*) echo ${TODAY.replaceAll('-', '')}T021500 ;; *"days ago"*) exec ${date} -u -d "${TODAY} 12:00 $3" "$4" ;; *) exec ${date} "$@" ;; esac\n`,
  );
  chmodSync(join(fake, 'date'), 0o755);
  const run = async (script: string): Promise<ShellResult> => {
    for (const path of ['/etc/carectl/report.env', '/srv/care']) assert.ok(script.split(path).length <= 2, `the job names ${path} at most once`);
    const file = join(root, `job-${readdirSync(root).length}`);
    writeFileSync(file, script.replace('/etc/carectl/report.env', join(etc, 'report.env')).replace('/srv/care', care));
    return shell.run(`PATH='${fake}':"$PATH" sh '${file}'`, { timeoutMs: 60_000 });
  };
  return { care, run };
}

describe("the README's nightly and weekly jobs", () => {
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

  const madeSince = (count: number): string[] => sandbox.data.reports.slice(count).map((report) => `${report.date_from}..${report.date_to}`);

  it('makes the reports of the last seven days not there yet, each once, and picks a report up again instead of making it twice', async () => {
    const { nightly } = await recipes();
    const { care, run } = site(sandbox, shell);
    const missed = [daysAgo(6), daysAgo(3), daysAgo(1)];
    for (const days of [7, 5, 4, 2]) writeFileSync(join(care, `report-${daysAgo(days)}.csv`), 'made on its night\n');
    const reports = sandbox.data.reports.length;

    const first = await run(nightly);
    assert.equal(first.code, 0, describeRun('care-nightly', first));
    assert.deepEqual(
      madeSince(reports),
      missed.map((day) => `${day}..${day}`),
    );
    const names = readdirSync(care).filter((name) => name.startsWith('report-'));
    assert.deepEqual(names.sort(), [1, 2, 3, 4, 5, 6, 7].map((days) => `report-${daysAgo(days)}.csv`).sort());
    assert.equal(readFileSync(join(care, `report-${daysAgo(5)}.csv`), 'utf8'), 'made on its night\n');

    // The file of a night lost after the report was made (a disk, a hand): the next run downloads that report again.
    rmSync(join(care, `report-${daysAgo(3)}.csv`));
    const again = await run(nightly);
    assert.equal(again.code, 0, describeRun('care-nightly', again));
    assert.equal(sandbox.data.reports.length, reports + missed.length, 'no second report');
    assert.ok(existsSync(join(care, `report-${daysAgo(3)}.csv`)));
  });

  it('run twice in the same second, a conversation moved in between: two exports, every conversation in one of them', async () => {
    const { nightly } = await recipes();
    const { care, run } = site(sandbox, shell);
    for (let days = 1; days <= 7; days++) writeFileSync(join(care, `report-${daysAgo(days)}.csv`), '');
    const job = async (): Promise<void> => {
      const result = await run(nightly);
      assert.equal(result.code, 0, describeRun('care-nightly', result));
    };

    await job();
    const moved = sandbox.data.conversations[3] as Conversation;
    moved.newestMs = Math.floor(Date.now() / 1000) * 1000;
    sandbox.data.revision++;
    await job();

    const exports = readdirSync(care)
      .filter((name) => name.startsWith('conversations-'))
      .sort();
    assert.equal(exports.length, 2, readdirSync(care).join(' '));
    assert.ok(exports.every((name) => name.startsWith(`conversations-${TODAY.replaceAll('-', '')}T021500-`)));
    const [first, second] = exports.map((name) => csvIds(readFileSync(join(care, name), 'utf8'))) as [string[], string[]];
    const all = sandbox.data.conversations.map((c) => c.id);
    assert.deepEqual(new Set([...first, ...second]), new Set(all));
    assert.ok(second.includes(moved.id), `the moved conversation ${moved.id} is in the second export`);
  });

  it("the cron report's script saves yesterday's report, and exits 3 naming why when the credentials are refused", async () => {
    const script = await cronReport();
    const saved = site(sandbox, shell);
    const done = await saved.run(script.replace('/srv/reports', saved.care));
    assert.equal(done.code, 0, describeRun('nightly-care-report', done));
    assert.deepEqual(readdirSync(saved.care), [`care-${daysAgo(1)}.csv`]);
    const refused = site(sandbox, shell, 'not-the-password');
    const result = await refused.run(script.replace('/srv/reports', refused.care));
    assert.equal(result.code, 3, describeRun('nightly-care-report', result));
    assert.match(result.stderr, new RegExp(`\\ncare report ${daysAgo(1)}: credentials refused\\n$`));
    assert.deepEqual(readdirSync(refused.care), []);
  });

  it('exits 3 when the credentials are refused, and stops there', async () => {
    const { nightly } = await recipes();
    const { care, run } = site(sandbox, shell, 'not-the-password');
    const reports = sandbox.data.reports.length;
    const result = await run(nightly);
    assert.equal(result.code, 3, describeRun('care-nightly', result));
    assert.equal(result.stdout, '');
    assert.equal(result.stderr.trimEnd().split('\n').length, 1, result.stderr);
    assert.deepEqual(readdirSync(care), []);
    assert.equal(sandbox.data.reports.length, reports);
  });
});

describe("the README's weekly job", () => {
  it('loaded in place of the table, brings in a status changed without a new message and a deleted conversation', async (t) => {
    if (spawnSync('sqlite3', ['-version']).status !== 0) return t.skip('sqlite3 is not installed');
    const { nightly, weekly, load } = await recipes();
    // The service before and after it deleted a conversation: one address, the demo data less its last conversation.
    const port = await freePort();
    const first = await openSandbox({ port });
    const shell = await openShellSession(first);
    let service = first;
    t.after(async () => {
      await shell.close();
      await service.close();
    });
    const { care, run } = site(first, shell);
    // Every report is there already: this is about the export.
    for (let days = 1; days <= 7; days++) writeFileSync(join(care, `report-${daysAgo(days)}.csv`), '');
    const loaded = new Set<string>();
    const job = async (script: string): Promise<string> => {
      const result = await run(script);
      assert.equal(result.code, 0, describeRun(script.split('\n').at(-2) as string, result));
      const made = readdirSync(care).filter((name) => /^(conversations|full)-.*\.csv$/.test(name) && !loaded.has(name));
      assert.equal(made.length, 1, made.join(' '));
      loaded.add(made[0] as string);
      return made[0] as string;
    };
    const sh = async (line: string): Promise<string> => {
      const result = await shell.run(`cd '${care}' && ${line}`);
      assert.equal(result.code, 0, describeRun(line, result));
      return result.stdout;
    };
    const table = async (): Promise<string[]> =>
      (await sh(`sqlite3 care.db "SELECT id || ' ' || status FROM conversations ORDER BY id"`)).trimEnd().split('\n');
    const served = (): string[] => service.data.conversations.map((c) => `${c.id} ${c.status}`).sort();

    await sh(load(await job(nightly)));
    assert.deepEqual(await table(), served());

    await first.close();
    service = await openSandbox({ port, conversations: first.data.conversations.length - 1 });
    const deleted = first.data.conversations.at(-1) as Conversation;
    assert.equal(service.data.byId.conversations.get(deleted.id), undefined);
    // A status changed by the care team, no new message.
    const changed = service.data.conversations.find((c) => c.status === 'unread' && c.tag_ids.length === 0 && c.channel_ids.includes('201')) as Conversation;
    await sh(`carectl conversations update ${changed.id} --status on_hold`);
    assert.equal(changed.status, 'on_hold');

    // What README says an incremental run cannot see: it exports neither.
    const nightlyFile = await job(nightly);
    const exported = csvIds(readFileSync(join(care, nightlyFile), 'utf8'));
    assert.ok(!exported.includes(changed.id) && !exported.includes(deleted.id), exported.join(' '));
    await sh(load(nightlyFile));
    assert.ok((await table()).includes(`${changed.id} unread`));
    assert.ok((await table()).includes(`${deleted.id} ${deleted.status}`));

    await job(weekly);
    assert.deepEqual(await table(), served());
    assert.ok((await table()).includes(`${changed.id} on_hold`));

    // The next nightly run loads on top of the weekly table as before.
    const messaged = service.data.conversations[20] as Conversation;
    messaged.newestMs = Math.floor(Date.now() / 1000) * 1000;
    service.data.revision++;
    const next = await job(nightly);
    assert.ok(csvIds(readFileSync(join(care, next), 'utf8')).includes(messaged.id));
    await sh(load(next));
    assert.deepEqual(await table(), served());
  });
});
