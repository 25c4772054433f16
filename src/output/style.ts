import type { OutStream } from '../core/io.js';

/**
 * Whether to colour `out`: --color/--no-color, else NO_COLOR, else FORCE_COLOR (as chalk and node
 * read it: 0 or false off, any other value, even empty, on), else the CLICOLOR convention as gh
 * reads it (CLICOLOR_FORCE set and not 0 on, CLICOLOR=0 off), else a terminal that is not
 * TERM=dumb (which takes no escape sequences, as git and supports-color read it).
 */
export function useColor(flag: boolean | undefined, env: Readonly<Record<string, string | undefined>>, out: OutStream): boolean {
  if (flag !== undefined) return flag;
  if (env.NO_COLOR) return false;
  if (env.FORCE_COLOR !== undefined) return env.FORCE_COLOR !== '0' && env.FORCE_COLOR !== 'false';
  if (env.CLICOLOR_FORCE && env.CLICOLOR_FORCE !== '0') return true;
  if (env.CLICOLOR === '0') return false;
  return out.isTTY && env.TERM !== 'dumb';
}

/** Bold text when colour is on, plain text otherwise; chalk is loaded only when it is needed. */
export async function boldWhen(color: boolean): Promise<(text: string) => string> {
  if (!color) return (text) => text;
  const { Chalk } = await import('chalk');
  const chalk = new Chalk({ level: 1 });
  return (text) => chalk.bold(text);
}
