/**
 * A certificate the machine does not accept, said in words a person can act on: which host,
 * what is wrong with its certificate, and the fix. Such a failure happens at the handshake,
 * before any byte of the request leaves, and asking again gets the same answer: it is never
 * retried, and never counted as a request that may have reached the service.
 */

/** OpenSSL's and Node's codes, by the problem they mean. */
const PROBLEMS: ReadonlyArray<readonly [ReadonlySet<string>, 'self-signed' | 'untrusted' | 'expired' | 'not-yet-valid' | 'name' | 'invalid']> = [
  [new Set(['DEPTH_ZERO_SELF_SIGNED_CERT']), 'self-signed'],
  [
    new Set([
      'SELF_SIGNED_CERT_IN_CHAIN',
      'UNABLE_TO_GET_ISSUER_CERT',
      'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
      'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      'CERT_UNTRUSTED',
      'CERT_REJECTED',
    ]),
    'untrusted',
  ],
  [new Set(['CERT_HAS_EXPIRED']), 'expired'],
  [new Set(['CERT_NOT_YET_VALID']), 'not-yet-valid'],
  [new Set(['ERR_TLS_CERT_ALTNAME_INVALID']), 'name'],
  [
    new Set([
      'CERT_SIGNATURE_FAILURE',
      'CERT_REVOKED',
      'INVALID_CA',
      'CERT_CHAIN_TOO_LONG',
      'INVALID_PURPOSE',
      'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
      'ERR_TLS_CERT_SIGNATURE_ALGORITHM_UNSUPPORTED',
    ]),
    'invalid',
  ],
];

interface TlsFailure {
  code?: string;
  cause?: unknown;
  cert?: { subjectaltname?: string; subject?: { CN?: string } };
}

/** The verification failure in `err` (or its causes), if it is one. */
function certificateFailure(err: unknown): { failure: TlsFailure; problem: (typeof PROBLEMS)[number][1] } | undefined {
  for (let e = err as TlsFailure | undefined, depth = 0; e && depth < 4; e = e.cause as TlsFailure | undefined, depth++) {
    const problem = PROBLEMS.find(([codes]) => codes.has(e!.code ?? ''))?.[1];
    if (problem) return { failure: e, problem };
  }
  return undefined;
}

export function isCertificateError(err: unknown): boolean {
  return certificateFailure(err) !== undefined;
}

/** What a TLS-inspecting proxy or a private CA needs: the same fix either way. */
const TRUST_FIX =
  'if the service uses a private CA, or this network inspects TLS (a company proxy), give carectl that CA certificate: NODE_EXTRA_CA_CERTS=/path/ca.pem';

/**
 * One line for a certificate `url`'s host presented that was refused, or undefined when `err`
 * is no certificate failure: `the certificate of HOST:PORT is self-signed; if … NODE_EXTRA_CA_CERTS=/path/ca.pem`.
 */
export function certificateMessage(err: unknown, url: URL, of: 'service' | 'download' = 'service'): string | undefined {
  const found = certificateFailure(err);
  if (found === undefined) return undefined;
  // A download address is the service's to give: the base URL has no bearing on it.
  const host = `${url.port ? `${url.hostname}:${url.port}` : url.hostname}${of === 'download' ? ' (the download host the service named)' : ''}`;
  const code = found.failure.code;
  switch (found.problem) {
    case 'self-signed':
      return `the certificate of ${host} is self-signed, which this machine does not trust (${code}); ${TRUST_FIX}`;
    case 'untrusted':
      return `the certificate of ${host} is issued by a CA this machine does not trust (${code}); ${TRUST_FIX}`;
    case 'expired':
      return `the certificate of ${host} has expired (${code}): the service must renew it; check this machine's clock too`;
    case 'not-yet-valid':
      return `the certificate of ${host} is not valid yet (${code}): check this machine's clock`;
    case 'name': {
      const names = certificateNames(found.failure);
      return `the certificate of ${host} is issued for other names (${names === '' ? 'none' : names}), not ${url.hostname.replace(/^\[|\]$/g, '')} (${code}): ${of === 'download' ? 'the service gives this address, so the fix is theirs: a certificate that names it, or another download address' : 'use an address the certificate names in the base URL'}`;
    }
    case 'invalid':
      return `the certificate of ${host} is not valid (${code}); ${TRUST_FIX}`;
  }
}

/** The names a certificate is issued for: its subjectAltName entries, else its common name. */
function certificateNames(failure: TlsFailure): string {
  const alt = failure.cert?.subjectaltname;
  if (alt)
    return alt
      .split(/,\s*/)
      .map((entry) => entry.replace(/^(DNS|IP Address):/, ''))
      .join(', ');
  return failure.cert?.subject?.CN ?? '';
}
