/**
 * --query EXPR: a JMESPath expression over what `-o json` would print (the AWS and Azure CLIs'
 * flag), so a script needs no jq. The library is loaded only when the flag is given, from a file
 * of its own in the bundle (scripts/bundle.mjs): nothing is added to any other start.
 */
import { LastingError, UsageError } from '../core/errors.js';
import { StreamSink } from '../core/stream-sink.js';
import { safeJsonStringify } from './sanitize.js';
import type { RecordWriter, WriterOptions } from './types.js';

/** A compiled expression, applied to one JSON document. */
export type Query = (document: unknown) => unknown;

/**
 * Compiles EXPR, so a mistake is exit 2 before anything is sent. JMESPath as the JMESPath
 * Community specification has it: the original's, plus a few functions and operators.
 */
export async function compileQuery(expression: string): Promise<Query> {
  const { compile, TreeInterpreter } = await import('@jmespath-community/jmespath');
  let ast: ReturnType<typeof compile>;
  try {
    ast = compile(expression);
  } catch (err) {
    throw new UsageError(`--query: ${(err as Error).message} (a JMESPath expression, such as '[].id' or '[?status==\`open\`].id')`);
  }
  return (document) => {
    try {
      // An ExactNumber (an id past 2^53) is an object to JMESPath: selected and printed as the number it is.
      return TreeInterpreter.search(ast, document as Parameters<typeof TreeInterpreter.search>[1]);
    } catch (err) {
      // A function given the wrong type of value (`length(id)`), known only once the data came: exit 1, as requests were sent.
      throw new LastingError(`--query: ${(err as Error).message}`);
    }
  };
}

/**
 * Prints what the query makes of what json would print: of the one array of a list (so it holds
 * the list's records until the end, as jq does), or of each record of a `get`.
 */
class QueryWriter implements RecordWriter {
  readonly #sink: StreamSink;
  readonly #query: Query;
  /** A list's records, for the one array the query is applied to; undefined for a `get`. */
  readonly #records: Array<Record<string, unknown>> | undefined;

  constructor(opts: WriterOptions, query: Query) {
    this.#sink = new StreamSink(opts.out.stream, opts.signal, opts.out.file);
    this.#query = query;
    this.#records = opts.shape === 'list' ? [] : undefined;
  }

  async write(record: Record<string, unknown>): Promise<void> {
    if (this.#records) this.#records.push(record);
    else await this.#print(record);
  }

  async endPage(): Promise<void> {
    await this.#sink.flush();
  }

  /** A list's result goes out only at its end: a stop before it has delivered none of its records. */
  delivered(): number {
    return this.#records ? 0 : this.#sink.handled;
  }

  async end(): Promise<void> {
    if (this.#records) await this.#print(this.#records);
    await this.#sink.end();
  }

  async #print(document: unknown): Promise<void> {
    await this.#sink.write(`${safeJsonStringify(this.#query(document), 2)}\n`);
  }
}

export function createQueryWriter(opts: WriterOptions, query: Query): RecordWriter {
  return new QueryWriter(opts, query);
}
