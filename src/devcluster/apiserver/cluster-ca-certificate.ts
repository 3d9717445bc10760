/**
 * The dev cluster's CA certificate: a self-signed X.509 v3 certificate (ECDSA P-256, SHA-256,
 * subject and issuer `CN=kubernetes` as kubeadm names its cluster CA, basicConstraints CA:TRUE,
 * keyUsage digitalSignature/keyEncipherment/keyCertSign, valid 10 years) in PEM form, which the
 * root CA publisher copies into every namespace's `kube-root-ca.crt` ConfigMap.
 *
 * Node has no certificate builder, so the DER of the TBSCertificate is written here (RFC 5280
 * §4.1) and signed with `crypto.sign`.
 * Guarantees: `new X509Certificate(pem)` parses it; it verifies with its own public key; `ca` is true.
 * Caveats: nothing is served over TLS with it (the emulator listens on plain HTTP); the private key
 * is discarded.
 */
import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

function derLength(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  if (n < 0x100) return Buffer.from([0x81, n]);
  return Buffer.from([0x82, n >> 8, n & 0xff]);
}

function der(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), derLength(body.length), body]);
}

const sequence = (...content: Buffer[]) => der(0x30, ...content);

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const bytes = [40 * a + b];
  for (const n of rest) {
    const chunk = [n & 0x7f];
    for (let v = n >> 7; v > 0; v >>= 7) chunk.unshift((v & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return der(0x06, Buffer.from(bytes));
}

/** UTCTime YYMMDDHHMMSSZ (valid for years before 2050, as RFC 5280 requires UTCTime there). */
function utcTime(d: Date): Buffer {
  const iso = d.toISOString();
  const text = `${iso.slice(2, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  return der(0x17, Buffer.from(text, 'latin1'));
}

function commonName(cn: string): Buffer {
  return sequence(der(0x31, sequence(oid('2.5.4.3'), der(0x0c, Buffer.from(cn, 'utf8')))));
}

const ECDSA_WITH_SHA256 = sequence(oid('1.2.840.10045.4.3.2'));
const TRUE = der(0x01, Buffer.from([0xff]));

/** A new self-signed CA certificate, PEM-encoded (one `-----BEGIN CERTIFICATE-----` block). */
export function generateClusterCaPem(
  now = new Date(),
  commonNameText = 'kubernetes',
  keyPair: { publicKey: KeyObject; privateKey: KeyObject } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }),
): string {
  const { publicKey, privateKey } = keyPair;
  const serial = randomBytes(16);
  serial[0] &= 0x7f;
  if (serial[0] === 0) serial[0] = 1;
  const notAfter = new Date(now.getTime() + 10 * 365 * 24 * 3600 * 1000);
  const basicConstraints = sequence(oid('2.5.29.19'), TRUE, der(0x04, sequence(TRUE)));
  // digitalSignature (bit 0), keyEncipherment (bit 2), keyCertSign (bit 5): 0b10100100, 2 unused bits
  const keyUsage = sequence(oid('2.5.29.15'), TRUE, der(0x04, der(0x03, Buffer.from([0x02, 0xa4]))));
  const name = commonName(commonNameText);
  const tbs = sequence(
    der(0xa0, der(0x02, Buffer.from([0x02]))),
    der(0x02, serial),
    ECDSA_WITH_SHA256,
    name,
    sequence(utcTime(now), utcTime(notAfter)),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    der(0xa3, sequence(basicConstraints, keyUsage)),
  );
  const signature = sign('sha256', tbs, { key: privateKey, dsaEncoding: 'der' });
  const certificate = sequence(tbs, ECDSA_WITH_SHA256, der(0x03, Buffer.from([0x00]), signature));
  const base64 = certificate.toString('base64').replace(/(.{64})/g, '$1\n');
  return `-----BEGIN CERTIFICATE-----\n${base64.replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`;
}
