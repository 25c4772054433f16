import { NetworkError } from '../core/errors.js';

/**
 * A link the service sent to another origin: refused (credentials go to the base's origin only),
 * and known not to have been sent, so a list ends with its --resume token. Most often the
 * service does not know the address it is reached at (it sits behind a proxy).
 */
export class LinkElsewhereError extends NetworkError {
  constructor(to: URL, base: URL) {
    super(
      `refusing to follow a link to ${to.origin}: credentials are only sent to ${base.origin}; the service names another address than the one it is reached at (behind a proxy, it may not know its own): if ${to.origin} is the same service, use it as --base-url`,
      false,
    );
  }
}
