/**
 * The self-signed certificate the simulator serves (made at start, like pveproxy's node certificate) and its
 * SHA-256 fingerprint in PVE's `AA:BB:...` form (what `/nodes` reports as `ssl_fingerprint` and what clients pin).
 */
import { X509Certificate } from 'node:crypto'
import { generate } from 'selfsigned'

export interface SimCertificate {
  key: string
  cert: string
  fingerprint: string
}

/** `AA:BB:...` upper-case hex of the SHA-256 over the DER certificate. */
export function fingerprintOf(certPem: string): string {
  return new X509Certificate(certPem).fingerprint256
}

export async function makeCertificate(commonName = 'pve-sim'): Promise<SimCertificate> {
  const notBeforeDate = new Date(Date.now() - 60_000)
  const pems = await generate([{ name: 'commonName', value: commonName }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate: new Date(notBeforeDate.getTime() + 2 * 365 * 86_400_000),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '::1' },
        ],
      },
    ],
  })
  return { key: pems.private, cert: pems.cert, fingerprint: fingerprintOf(pems.cert) }
}
