// The client's TLS material checked before use, in the words of Go's crypto/tls and client-go's transport
// (TLSConfigFor): without this, Node reports PEM that is not PEM as an OpenSSL code
// (`error:1E08010C:DECODER routines::unsupported`) on the first request, or not at all until the handshake.
import {X509Certificate, createPrivateKey, createPublicKey, type KeyObject} from 'node:crypto'

interface PemBlock {
  type: string
  text: string
}

/** The PEM blocks of a text, in order (as encoding/pem's Decode finds them one after another). */
function pemBlocks(data: Buffer): PemBlock[] {
  const blocks: PemBlock[] = []
  for (const match of data.toString('latin1').matchAll(/-----BEGIN ([^\r\n-]*)-----\r?\n[\s\S]*?-----END \1-----/g)) {
    blocks.push({type: match[1], text: match[0]})
  }
  return blocks
}

/** client-go's rootCertPool: the CA data must hold at least one certificate it can parse. */
export function checkCertificateAuthority(ca: Buffer): void {
  const blocks = pemBlocks(ca)
  const certificates = blocks.filter((block) => block.type === 'CERTIFICATE')
  if (certificates.some((block) => parses(() => new X509Certificate(block.text)))) return
  // createErrorParsingCAData: the first problem it meets, after skipping other block types
  const problem = blocks.length === 0 ? 'unable to parse bytes as PEM block' : certificates.length > 0 ? 'failed to parse certificate: x509: malformed certificate' : 'no valid certificate authority data seen'
  throw new Error(`unable to load root certificates: ${problem}`)
}

/** Go's tls.X509KeyPair: a certificate block, a private key block, both parsed, and the key the certificate's. */
export function checkClientKeyPair(cert: Buffer, key: Buffer): void {
  const certBlocks = pemBlocks(cert)
  const certificates = certBlocks.filter((block) => block.type === 'CERTIFICATE')
  if (certificates.length === 0) {
    const skipped = certBlocks.map((block) => block.type)
    if (skipped.length === 0) throw new Error('tls: failed to find any PEM data in certificate input')
    if (skipped.length === 1 && skipped[0].endsWith('PRIVATE KEY')) {
      throw new Error('tls: failed to find certificate PEM data in certificate input, but did find a private key; PEM inputs may have been switched')
    }
    throw new Error(`tls: failed to find "CERTIFICATE" PEM block in certificate input after skipping PEM blocks of the following types: [${skipped.join(' ')}]`)
  }
  const skipped: string[] = []
  const keyBlock = pemBlocks(key).find((block) => {
    const isKey = block.type === 'PRIVATE KEY' || block.type.endsWith(' PRIVATE KEY')
    if (!isKey) skipped.push(block.type)
    return isKey
  })
  if (!keyBlock) {
    if (skipped.length === 0) throw new Error('tls: failed to find any PEM data in key input')
    if (skipped.length === 1 && skipped[0] === 'CERTIFICATE') throw new Error('tls: found a certificate rather than a key in the PEM for the private key')
    throw new Error(`tls: failed to find PEM block with type ending in "PRIVATE KEY" in key input after skipping PEM blocks of the following types: [${skipped.join(' ')}]`)
  }
  let certificate: X509Certificate
  try {
    certificate = new X509Certificate(certificates[0].text)
  } catch {
    throw new Error('x509: malformed certificate')
  }
  let privateKey: KeyObject
  try {
    privateKey = createPrivateKey(keyBlock.text)
  } catch {
    throw new Error('tls: failed to parse private key')
  }
  const publicKey = certificate.publicKey
  if (publicKey.asymmetricKeyType !== privateKey.asymmetricKeyType) throw new Error('tls: private key type does not match public key type')
  const derived = createPublicKey(privateKey).export({type: 'spki', format: 'der'})
  if (!derived.equals(publicKey.export({type: 'spki', format: 'der'}))) throw new Error('tls: private key does not match public key')
}

function parses(make: () => unknown): boolean {
  try {
    make()
    return true
  } catch {
    return false
  }
}
