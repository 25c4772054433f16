/**
 * Certificates made with openssl for loopback TLS servers: a test CA, and leaves that are good,
 * self-signed, issued for another name, and expired. undefined (with the reason) where openssl
 * is missing, for the tests to skip.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCerts {
  folder: string;
  /** The CA's certificate file, for NODE_EXTRA_CA_CERTS. */
  caFile: string;
  key: Buffer;
  good: Buffer;
  selfSigned: Buffer;
  otherName: Buffer;
  expired: Buffer;
}

export async function makeCerts(): Promise<TestCerts | string> {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
  } catch {
    return 'openssl is not installed: the certificate tests are skipped';
  }
  const folder = await mkdtemp(join(tmpdir(), 'carectl-tls-'));
  const at = (name: string): string => join(folder, name);
  const openssl = (...args: string[]): void => void execFileSync('openssl', args, { cwd: folder, stdio: 'ignore' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '30', '-subj', '/CN=carectl test CA');
  openssl('req', '-new', ...ec, '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=localhost');
  const sign = async (name: string, altNames: string): Promise<void> => {
    await writeFile(at(`${name}.ext`), `subjectAltName=${altNames}\n`);
    openssl(
      'x509',
      '-req',
      '-in',
      'leaf.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '30',
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.pem`,
    );
  };
  await sign('good', 'DNS:localhost,IP:127.0.0.1');
  await sign('other', 'DNS:other.example,DNS:www.other.example');
  openssl(
    'req',
    '-x509',
    '-key',
    'leaf.key',
    '-out',
    'self.pem',
    '-days',
    '30',
    '-subj',
    '/CN=localhost',
    '-addext',
    'subjectAltName=DNS:localhost,IP:127.0.0.1',
  );
  // openssl 3.0's x509 cannot date a certificate in the past; its `ca` command can.
  await writeFile(at('index.txt'), '');
  await writeFile(at('serial'), '1000\n');
  await writeFile(at('ext.cnf'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  await writeFile(
    at('ca.cnf'),
    [
      '[ca]',
      'default_ca=test',
      '[test]',
      `database=${at('index.txt')}`,
      `serial=${at('serial')}`,
      `new_certs_dir=${folder}`,
      'default_md=sha256',
      'policy=any',
      '[any]',
      'commonName=supplied',
      '',
    ].join('\n'),
  );
  openssl(
    'ca',
    '-batch',
    '-config',
    'ca.cnf',
    '-cert',
    'ca.pem',
    '-keyfile',
    'ca.key',
    '-in',
    'leaf.csr',
    '-out',
    'expired.pem',
    '-notext',
    '-startdate',
    '20200101000000Z',
    '-enddate',
    '20200201000000Z',
    '-extfile',
    'ext.cnf',
  );
  const read = (name: string): Promise<Buffer> => readFile(at(name));
  return {
    folder,
    caFile: at('ca.pem'),
    key: await read('leaf.key'),
    good: await read('good.pem'),
    selfSigned: await read('self.pem'),
    otherName: await read('other.pem'),
    expired: await read('expired.pem'),
  };
}
