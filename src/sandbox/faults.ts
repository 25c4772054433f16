/** Fault injection on the API listener, drawn from a seeded die so a run is replayable. */
import { Random } from './random.js';

export type FaultKind = '429' | '500' | '502' | '503' | 'drop' | 'slow';
export const FAULT_KINDS: readonly FaultKind[] = ['429', '500', '502', '503', 'drop', 'slow'];

export interface FaultOptions {
  /** 0..1: probability that an API-listener request gets a fault instead of its answer. */
  rate?: number;
  /** Default: all six. */
  kinds?: FaultKind[];
  /** 429 Retry-After as delta-seconds (default) or HTTP-date. */
  retryAfter?: 'seconds' | 'date';
  /** Default 1. */
  retryAfterSeconds?: number;
  /** Delay before a 'slow' fault answers normally, default 2000. */
  slowMs?: number;
  /** Fault dice seed, default 1. */
  seed?: number;
  /** After N successfully served list pages (GET on any collection), every further list GET answers 500 until faults change. */
  failListAfterPages?: number;
  /** POST reports: create the report, then destroy the socket without any reply. */
  dropPostAfterBody?: boolean;
  /** Download listener: send headers and about half the body, then destroy the socket. */
  breakDownloads?: boolean;
  /** Download listener: send the body in 1 KiB pieces this many ms apart (a slow link). */
  trickleDownloadsMs?: number;
  /** Report download addresses answer 302 to the file, as a storage service's often do. */
  redirectDownloads?: boolean;
}

export class FaultPlan {
  private options: FaultOptions = {};
  private dice = new Random(1);
  private listPagesServed = 0;

  constructor(options: FaultOptions | undefined) {
    this.set(options);
  }

  /** Replaces the plan; the dice and the list page count start over. */
  set(options: FaultOptions | undefined): void {
    this.options = { ...options };
    this.dice = new Random(options?.seed ?? 1);
    this.listPagesServed = 0;
  }

  get current(): Readonly<FaultOptions> {
    return this.options;
  }

  /** The fault for the next API request, if the die says so. */
  draw(): FaultKind | undefined {
    const rate = this.options.rate ?? 0;
    if (rate <= 0 || this.dice.next() >= rate) return undefined;
    return this.dice.pick(this.options.kinds?.length ? this.options.kinds : FAULT_KINDS);
  }

  listPagesExhausted(): boolean {
    const limit = this.options.failListAfterPages;
    return limit !== undefined && this.listPagesServed >= limit;
  }

  countListPage(): void {
    this.listPagesServed++;
  }
}
