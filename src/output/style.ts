/** Bold text when colour is on, plain text otherwise; chalk is loaded only when it is needed. */
export async function boldWhen(color: boolean): Promise<(text: string) => string> {
  if (!color) return (text) => text;
  const { Chalk } = await import('chalk');
  const chalk = new Chalk({ level: 1 });
  return (text) => chalk.bold(text);
}
