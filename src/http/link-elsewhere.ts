import { CarectlError, ExitCode } from '../core/errors.js';

/**
 * Why a link the service sent to another origin is not followed (credentials go to the base's
 * origin only), with what most often causes it: the service does not know the address it is
 * reached at (it sits behind a proxy).
 */
export function linkElsewhereMessage(to: URL, base: URL): string {
  return `refusing to follow a link to ${to.origin}: credentials are only sent to ${base.origin}; the service names another address than the one it is reached at (behind a proxy, it may not know its own): if ${to.origin} is the same service, use it as --base-url`;
}

/** Such a link, refused before anything was sent: not a network failure, yet the exchange ends there, and a list with its --resume token. */
export class LinkElsewhereError extends CarectlError {
  constructor(to: URL, base: URL) {
    super(linkElsewhereMessage(to, base), ExitCode.failure, { exchange: 'elsewhere' });
  }
}
