/**
 * `login`, `logout` and `config set|get|unset|list|path`: the profile file from the command
 * line. The store (and conf with it) is imported only when one of these runs.
 */
import { text } from 'node:stream/consumers';
import type { Command } from 'commander';
import { Context, MAX_PARALLEL, MIN_PARALLEL } from '../../cli/context.js';
import { ApiError, AuthError, CarectlError, ExitCode, UsageError } from '../../core/errors.js';
import { FORMATS, sanitizeForTerminal, writeText } from '../../output/index.js';
import { parseEnum, parseIntInRange } from '../../core/parse.js';
import { VERSIONS } from '../../catalogue/index.js';
import { checkBaseUrl, sameOrigin } from '../../config/base-url.js';
import { CONFIG_KEYS, type ProfileValues, type SettingKey } from '../../config/keys.js';
import { noOptions, type Action, type CommandBody, type OptionReader } from '../../cli/action.js';
import { addExamples } from '../../cli/help.js';
import { offerColumns, resolveColumns, type ColumnSet } from '../../cli/columns.js';
import type { ConfigStore } from '../../config/store.js';
import { ask } from '../../config/terminal.js';

type ConfigKey = (typeof CONFIG_KEYS)[number];
const CREDENTIALS: readonly SettingKey[] = ['user', 'password'];
/** Shown for a stored password: fixed, so not even its length shows. */
const PASSWORD_MASK = '********';
/** The rows of `config list`. */
const SETTING_COLUMNS: ColumnSet = { of: 'config list', columns: ['profile', 'key', 'value'], defaults: ['profile', 'key', 'value'], notes: {}, closing: '' };
/** One cheap request that needs valid credentials. */
const CHECK_PATH = 'v1.3/tags';

export function addConfigCommands(program: Command, action: Action): void {
  const login = program
    .command('login')
    .description('check credentials with one request and store them in the profile (--base-url URL and --user NAME, or asked for on a terminal)')
    .option('--password-stdin', 'read the password from standard input (for scripts; otherwise it is asked for on the terminal)');
  addExamples(login, [
    'carectl login --base-url https://api.example.com --user alice',
    'printf \'%s\\n\' "$PASSWORD" | carectl login --base-url https://api.example.com --user alice --password-stdin',
    'carectl --profile staging login --base-url https://staging.example.com',
  ]);
  login.action(action((raw) => ({ passwordStdin: raw.passwordStdin === true }), loginCommand));

  const logout = program
    .command('logout')
    .description("remove the stored user and password of the profile (the profile's other settings stay)")
    .action(action(noOptions, logoutCommand));
  addExamples(logout, ['carectl logout', 'carectl --profile staging logout']);

  const config = program.command('config').description(`profile settings in the config file: ${CONFIG_KEYS.join(', ')}`);
  /** The positional arguments: a key, and its value for set. */
  const keyAndValue: OptionReader<string[]> = (_raw, args) => args as string[];
  const verbs: Array<[string, string, string[], CommandBody<string[]>]> = [
    [
      'set <key> <value>',
      `store a setting in the profile (${CONFIG_KEYS.join(', ')}; the password only through login)`,
      ['carectl config set output json', 'carectl --profile staging config set base-url https://staging.example.com'],
      (ctx, [key, value]) => setCommand(ctx, key as string, value as string),
    ],
    [
      'get <key>',
      'print a stored setting of the profile (exit 1 when it is not set)',
      ['carectl config get base-url', 'carectl --profile staging config get user'],
      (ctx, [key]) => getCommand(ctx, key as string),
    ],
    [
      'unset <key>',
      'remove a stored setting from the profile',
      ['carectl config unset output', 'carectl --profile staging config unset api-version'],
      (ctx, [key]) => unsetCommand(ctx, key as string),
    ],
    [
      'list',
      'every stored setting of every profile (profile, key, value); the password is masked',
      ['carectl config list', 'carectl config list -o json'],
      (ctx) => listCommand(ctx),
    ],
    [
      'path',
      'print where the config file is (it may not exist yet)',
      ['carectl config path', 'carectl config path && ls -l "$(carectl config path)"'],
      async (ctx) => writeText(ctx.io.stdout.stream, `${(await openStore(ctx)).path}\n`, ctx.io.signal),
    ],
  ];
  for (const [usage, description, examples, body] of verbs) {
    const verb = config.command(usage).description(description);
    if (usage === 'list') offerColumns(verb, SETTING_COLUMNS).action(action(keyAndValue, body, ['query']));
    else verb.action(action(keyAndValue, body));
    addExamples(verb, examples);
  }
  addExamples(config, [
    'carectl config set output json',
    'carectl --profile staging config set base-url https://staging.example.com',
    'carectl config list -o json',
  ]);
}

async function openStore(ctx: Context): Promise<ConfigStore> {
  const { openConfig } = await import('../../config/store.js');
  return openConfig(ctx.io);
}

// ---- login / logout ----

/** Commands that change the stored profile have nothing to do with the sandbox's own credentials. */
function refuseSandbox(ctx: Context, command: string): void {
  if (ctx.globals.sandbox)
    throw new UsageError(`${command}: --sandbox brings its own address and demo credentials; it neither uses nor changes the stored profile`);
}

async function loginCommand(ctx: Context, opts: { passwordStdin: boolean }): Promise<void> {
  refuseSandbox(ctx, 'login');
  const fromStdin = opts.passwordStdin;
  if (!fromStdin && !ctx.io.stdin.isTTY) {
    throw new UsageError(
      `login: no terminal to ask for the password; pipe it in with --password-stdin (printf '%s\\n' "$PASSWORD" | carectl login --user NAME --password-stdin), or for scripts and cron jobs set CARECTL_USER and CARECTL_PASSWORD instead of logging in`,
    );
  }
  const store = await openStore(ctx);
  const profile = ctx.settings.profileName;
  // A corrupt config file stops the login here, before anything is sent or asked.
  await store.profile(profile);
  // The address and user are asked for only where the question can be seen and answered.
  const canAsk = !fromStdin && ctx.io.stdin.isTTY && ctx.io.stderr.isTTY;
  let base = await ctx.settings.lookup('base-url');
  if (base === undefined) {
    if (!canAsk) throw new UsageError('login: give the service address with --base-url URL (or CARECTL_BASE_URL)');
    base = { value: (await ask(ctx.io, 'base address (https://host): ', { secret: false })).trim(), source: 'base address' };
  }
  const baseUrl = checkBaseUrl(base.value, ctx.globals.insecureHttp === true, base.source);
  // The api/1 address given with this login (flag, environment or profile) is stored with it.
  const annotations = await ctx.settings.lookup('annotations-url');
  if (annotations !== undefined) checkBaseUrl(annotations.value, ctx.globals.insecureHttp === true, annotations.source);

  let user = await ctx.settings.get('user');
  if (user === undefined) {
    if (fromStdin) throw new UsageError('login: --password-stdin reads only the password; give the user with --user NAME (or CARECTL_USER)');
    if (!canAsk) throw new UsageError('login: no terminal to ask for the user; give it with --user NAME (or CARECTL_USER)');
    user = await ask(ctx.io, `user for ${baseUrl.origin}: `, { secret: false });
  }
  checkUser(user);
  const password = fromStdin ? passwordFromStdin(await text(ctx.io.stdin.stream)) : await ask(ctx.io, `password for ${user}: `, { secret: true });
  if (password === '') throw new UsageError('login: the password is empty');

  await checkCredentials(ctx, base.value, user, password);
  // An api/1 address stored for another base address is dropped (lookup() does not give it).
  const previous = (await store.profile(profile))['annotations-url'];
  await store.set(profile, { 'base-url': base.value, user, password, 'annotations-url': annotations?.value });
  ctx.notice(`logged in to ${baseUrl.origin} as ${user}; stored in profile "${profile}" (${store.path})`);
  if (previous !== undefined && annotations === undefined) ctx.notice(droppedAnnotationsNotice(profile, baseUrl.origin));
}

/** One trailing newline is the pipe's, not the password's; more lines are a mistake. */
function passwordFromStdin(input: string): string {
  const password = input.replace(/\r?\n$/, '');
  if (/[\r\n]/.test(password)) throw new UsageError('login: --password-stdin read more than one line; pipe in the password alone');
  return password;
}

function checkUser(user: string): void {
  if (user === '') throw new UsageError('user: the user name is empty');
  // HTTP Basic joins user and password with ':'; the service would read a different user
  if (user.includes(':')) throw new UsageError('user: a user name cannot contain ":"');
  if (/[\u0000-\u001f\u007f-\u009f]/.test(user)) throw new UsageError('user: the user name contains control characters');
}

/**
 * One GET with exactly the transport, retries and --verbose trace of any other command, through
 * a context whose only settings are the ones being checked.
 */
async function checkCredentials(ctx: Context, base: string, user: string, password: string): Promise<void> {
  const probe = new Context({ ...ctx.io, env: { ...ctx.io.env, CARECTL_PASSWORD: password } }, { ...ctx.globals, baseUrl: base, user });
  try {
    const transport = await probe.transport();
    await transport.get(transport.url(CHECK_PATH, [['page_size', '1']]));
  } catch (err) {
    if (err instanceof ApiError && err.exitCode === ExitCode.auth)
      throw new AuthError(`login: the service refused these credentials, nothing was stored: ${err.message}`);
    throw err;
  } finally {
    await probe.close();
  }
}

async function logoutCommand(ctx: Context): Promise<void> {
  refuseSandbox(ctx, 'logout');
  const store = await openStore(ctx);
  const profile = ctx.settings.profileName;
  const removed = await store.unset(profile, CREDENTIALS);
  ctx.notice(
    removed.length > 0 ? `removed the stored credentials of profile "${profile}" (${store.path})` : `profile "${profile}" holds no stored credentials`,
  );
  if (ctx.io.env.CARECTL_PASSWORD) ctx.notice('CARECTL_PASSWORD is still set in the environment, and carectl will keep using it');
}

// ---- config set / get / unset / list ----

function configKey(key: string, verb: string): ConfigKey {
  if (key === 'password') {
    throw new UsageError(
      verb === 'get'
        ? 'config get: the password is never printed'
        : `config ${verb}: the password is stored by \`carectl login\` (after checking it) and removed by \`carectl logout\``,
    );
  }
  return parseEnum(key, `config ${verb}`, CONFIG_KEYS);
}

/** The value as it will be used, so a mistake shows now rather than in a later command. */
function checkValue(ctx: Context, key: ConfigKey, value: string): string {
  switch (key) {
    case 'base-url':
    case 'annotations-url':
      checkBaseUrl(value, ctx.globals.insecureHttp === true, key);
      return value;
    case 'user':
      checkUser(value);
      return value;
    case 'output':
      return parseEnum(value, 'output', FORMATS);
    case 'api-version':
      return parseEnum(value, 'api-version', VERSIONS);
    case 'parallel':
      return String(parseIntInRange(value, 'parallel', MIN_PARALLEL, MAX_PARALLEL));
  }
}

async function setCommand(ctx: Context, key: string, value: string): Promise<void> {
  refuseSandbox(ctx, 'config set');
  const configKeyName = configKey(key, 'set');
  const checked = checkValue(ctx, configKeyName, value);
  const store = await openStore(ctx);
  const profile = ctx.settings.profileName;
  let movesAddress = false;
  let dropsAnnotations = false;
  let changesUser = false;
  let stored: ProfileValues = {};
  // Decided on what is stored when the write lock is held, not on an earlier read.
  await store.set(profile, (current) => {
    stored = current;
    const values: ProfileValues = { [configKeyName]: checked };
    // Stored credentials and the api/1 address belong to their address, and the password to its
    // user: moving the profile elsewhere drops them, another user name drops the password.
    const moves = configKeyName === 'base-url' && !sameOrigin(stored['base-url'], checked);
    movesAddress = moves && stored.password !== undefined;
    // An api/1 address set before any base address is taken to be this one's.
    dropsAnnotations = moves && stored['base-url'] !== undefined && stored['annotations-url'] !== undefined;
    changesUser = configKeyName === 'user' && stored.password !== undefined && stored.user !== checked;
    if (movesAddress) for (const credential of CREDENTIALS) values[credential] = undefined;
    if (dropsAnnotations) values['annotations-url'] = undefined;
    if (changesUser) values.password = undefined;
    return values;
  });
  if (movesAddress) ctx.notice(`removed the stored credentials of profile "${profile}": they were for another address; run \`carectl login\` for ${checked}`);
  if (dropsAnnotations) ctx.notice(droppedAnnotationsNotice(profile, checked));
  if (changesUser)
    ctx.notice(`removed the stored password of profile "${profile}": it was ${stored.user ?? 'another user'}'s; run \`carectl login\` as ${checked}`);
}

function droppedAnnotationsNotice(profile: string, address: string): string {
  return `removed the stored annotations-url of profile "${profile}": it was for another address; set the api/1 address of ${address} with \`carectl config set annotations-url URL\` if it has one of its own`;
}

async function getCommand(ctx: Context, key: string): Promise<void> {
  const configKeyName = configKey(key, 'get');
  const profile = ctx.settings.profileName;
  const value = (await (await openStore(ctx)).profile(profile))[configKeyName];
  if (value === undefined) throw new CarectlError(`${configKeyName} is not set in profile "${profile}"`);
  await writeText(ctx.io.stdout.stream, `${sanitizeForTerminal(value)}\n`, ctx.io.signal);
}

async function unsetCommand(ctx: Context, key: string): Promise<void> {
  refuseSandbox(ctx, 'config unset');
  const configKeyName = configKey(key, 'unset');
  const profile = ctx.settings.profileName;
  const store = await openStore(ctx);
  const removed = await store.unset(profile, [configKeyName]);
  if (removed.length === 0) ctx.notice(`${configKeyName} was not set in profile "${profile}"`);
  // The api/1 address was the removed base address's: kept, it would go out with any address after that.
  if (removed.includes('base-url') && (await store.unset(profile, ['annotations-url'])).length > 0) {
    ctx.notice(`removed the stored annotations-url of profile "${profile}": it was for the base address removed`);
  }
}

async function listCommand(ctx: Context): Promise<void> {
  const printer = await ctx.printer();
  const store = await openStore(ctx);
  const rows = Object.entries(await store.list()).flatMap(([profile, values]) =>
    Object.entries(values).map(([key, value]) => ({ profile, key, value: key === 'password' ? PASSWORD_MASK : value })),
  );
  const writer = printer.writer('list', resolveColumns(SETTING_COLUMNS.columns, SETTING_COLUMNS.defaults, ctx.globals.columns, undefined));
  for (const row of rows) await writer.write(row);
  await writer.end();
  if (rows.length === 0) ctx.notice(`no settings stored in ${store.path}`);
}
