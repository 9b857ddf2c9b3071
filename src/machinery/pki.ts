// PKI primitives for the API server: certificate authorities, signed certificates, PKCS#10 requests,
// and the checks the certificates API needs. Keys are ECDSA P-256 (PKCS#8 "PRIVATE KEY" PEM); given
// keys may also be P-384, RSA or Ed25519. Generation runs on Node's webcrypto through @peculiar/x509;
// parsing and verification are synchronous (node:crypto plus a small DER reader) so validation code
// can call them inline.
//
// Usage names are the certificates.orch.io/v1 KeyUsage strings ('digital signature', 'client auth', …),
// mapped as Kubernetes' signer maps them: 'signing' is an alias of 'digital signature' and 's/mime' of
// 'email protection'. Issued certificates are back-dated 5 minutes for clock skew (their lifetime still
// runs from now) and never outlive the signing CA, as Kubernetes' signer does.
import 'reflect-metadata'
import * as x509 from '@peculiar/x509'
import {
  createPrivateKey,
  createPublicKey,
  randomBytes,
  verify as nodeVerify,
  webcrypto,
  X509Certificate as NodeX509Certificate,
  type KeyObject,
} from 'node:crypto'
import {isIP} from 'node:net'

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0])
const subtle = webcrypto.subtle

/** A certificate and its private key, both PEM. */
export interface CertKeyPair {
  certPem: string
  keyPem: string
}

const KEY_USAGES: ReadonlyArray<readonly [string, number]> = [
  ['digital signature', x509.KeyUsageFlags.digitalSignature],
  ['content commitment', x509.KeyUsageFlags.nonRepudiation],
  ['key encipherment', x509.KeyUsageFlags.keyEncipherment],
  ['data encipherment', x509.KeyUsageFlags.dataEncipherment],
  ['key agreement', x509.KeyUsageFlags.keyAgreement],
  ['cert sign', x509.KeyUsageFlags.keyCertSign],
  ['crl sign', x509.KeyUsageFlags.cRLSign],
  ['encipher only', x509.KeyUsageFlags.encipherOnly],
  ['decipher only', x509.KeyUsageFlags.decipherOnly],
]
const EXT_KEY_USAGES: ReadonlyArray<readonly [string, string]> = [
  ['any', '2.5.29.37.0'],
  ['server auth', '1.3.6.1.5.5.7.3.1'],
  ['client auth', '1.3.6.1.5.5.7.3.2'],
  ['code signing', '1.3.6.1.5.5.7.3.3'],
  ['email protection', '1.3.6.1.5.5.7.3.4'],
  ['ipsec end system', '1.3.6.1.5.5.7.3.5'],
  ['ipsec tunnel', '1.3.6.1.5.5.7.3.6'],
  ['ipsec user', '1.3.6.1.5.5.7.3.7'],
  ['timestamping', '1.3.6.1.5.5.7.3.8'],
  ['ocsp signing', '1.3.6.1.5.5.7.3.9'],
  ['microsoft sgc', '1.3.6.1.4.1.311.10.3.3'],
  ['netscape sgc', '2.16.840.1.113730.4.1'],
]
const USAGE_ALIASES: Record<string, string> = {signing: 'digital signature', 's/mime': 'email protection'}

/** Every usage name the certificates API accepts, in its documented order. */
export const KNOWN_USAGES = [
  'signing', 'digital signature', 'content commitment', 'key encipherment', 'key agreement', 'data encipherment',
  'cert sign', 'crl sign', 'encipher only', 'decipher only', 'any', 'server auth', 'client auth', 'code signing',
  'email protection', 's/mime', 'ipsec end system', 'ipsec tunnel', 'ipsec user', 'timestamping', 'ocsp signing',
  'microsoft sgc', 'netscape sgc',
] as const
export type CertificateUsage = (typeof KNOWN_USAGES)[number]

/** The KeyUsage flags and ExtendedKeyUsage OIDs for usage names; throws on an unknown name. */
export function usageExtensions(usages: readonly string[]): {keyUsage: number; extKeyUsages: string[]} {
  let keyUsage = 0
  const extKeyUsages: string[] = []
  for (const raw of usages) {
    const name = USAGE_ALIASES[raw] ?? raw
    const ku = KEY_USAGES.find(([n]) => n === name)
    const eku = EXT_KEY_USAGES.find(([n]) => n === name)
    if (ku) keyUsage |= ku[1]
    else if (eku) {
      if (!extKeyUsages.includes(eku[1])) extKeyUsages.push(eku[1])
    } else throw new Error(`unrecognized usage: ${JSON.stringify(raw)}`)
  }
  return {keyUsage, extKeyUsages}
}

// ---------------------------------------------------------------------------------------------- PEM

export interface PemBlock {
  type: string
  headers: Record<string, string>
  bytes: Buffer
}

/**
 * Decodes the PEM blocks of `text` as Go's encoding/pem does: a block starts with `-----BEGIN T-----`
 * at the start of a line and ends with `-----END T-----`; `Key: value` lines right after BEGIN are
 * headers; a block whose body is not base64 is skipped. Text around the blocks is ignored.
 */
export function decodePEM(text: string): PemBlock[] {
  const blocks: PemBlock[] = []
  let rest = text
  for (;;) {
    const begin = /(?:^|\n)-----BEGIN ([^\n]*?)-----[ \t\r]*(?:\n|$)/.exec(rest)
    if (!begin) break
    const type = begin[1]
    const afterBegin = rest.slice(begin.index + begin[0].length)
    const endMarker = `-----END ${type}-----`
    let endIndex = 0
    if (!afterBegin.startsWith(endMarker)) {
      const found = afterBegin.indexOf(`\n${endMarker}`)
      endIndex = found < 0 ? -1 : found + 1
    }
    const trailer = endIndex < 0 ? null : /^[ \t\r]*(?:\n|$)/.exec(afterBegin.slice(endIndex + endMarker.length))
    if (endIndex < 0 || !trailer) {
      rest = afterBegin
      continue
    }
    const lines = afterBegin.slice(0, endIndex).split('\n')
    const headers: Record<string, string> = {}
    let i = 0
    for (; i < lines.length; i++) {
      const colon = lines[i].indexOf(':')
      if (colon < 0) break
      headers[lines[i].slice(0, colon).trim()] = lines[i].slice(colon + 1).trim()
    }
    if (i > 0 && i < lines.length && lines[i].trim() === '') i++
    const base64 = lines.slice(i).join('').replace(/[ \t\r\n]/g, '')
    if (base64.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(base64)) {
      rest = afterBegin
      continue
    }
    blocks.push({type, headers, bytes: Buffer.from(base64, 'base64')})
    rest = afterBegin.slice(endIndex + endMarker.length + trailer[0].length)
  }
  return blocks
}

/** PEM-encodes DER bytes under `label`, 64 columns. */
export function encodePEM(der: Uint8Array | ArrayBuffer, label: string): string {
  const body = Buffer.from(der instanceof ArrayBuffer ? new Uint8Array(der) : der).toString('base64')
  return `-----BEGIN ${label}-----\n${body.replace(/(.{64})/g, '$1\n').replace(/\n$/, '')}\n-----END ${label}-----\n`
}

// ---------------------------------------------------------------------------------------------- DER

interface Tlv {
  tag: number
  start: number
  contentStart: number
  end: number
}

function readTlv(buf: Uint8Array, offset: number, limit = buf.length): Tlv {
  if (offset + 2 > limit) throw new Error('truncated DER')
  const tag = buf[offset]
  let length = buf[offset + 1]
  let contentStart = offset + 2
  if (length & 0x80) {
    const n = length & 0x7f
    if (n === 0 || n > 4 || contentStart + n > limit) throw new Error('unsupported DER length')
    length = 0
    for (let i = 0; i < n; i++) length = length * 256 + buf[contentStart + i]
    contentStart += n
  }
  const end = contentStart + length
  if (end > limit) throw new Error('truncated DER')
  return {tag, start: offset, contentStart, end}
}

function children(buf: Uint8Array, parent: Tlv): Tlv[] {
  const out: Tlv[] = []
  for (let off = parent.contentStart; off < parent.end; ) {
    const child = readTlv(buf, off, parent.end)
    out.push(child)
    off = child.end
  }
  return out
}

function decodeOID(bytes: Uint8Array): string {
  const parts: number[] = []
  let value = 0
  for (const b of bytes) {
    value = value * 128 + (b & 0x7f)
    if (!(b & 0x80)) {
      if (parts.length === 0) parts.push(value < 80 ? Math.floor(value / 40) : 2, value < 80 ? value % 40 : value - 80)
      else parts.push(value)
      value = 0
    }
  }
  return parts.join('.')
}

// ---------------------------------------------------------------------------------------------- keys

const EC_P256 = {name: 'ECDSA', namedCurve: 'P-256'}

type SignAlgorithm = {name: string; hash?: string}

type ImportAlgorithm = webcrypto.EcKeyImportParams | webcrypto.RsaHashedImportParams | webcrypto.Algorithm

function keyAlgorithm(key: KeyObject): {importAlg: ImportAlgorithm; signAlg: SignAlgorithm} {
  const type = key.asymmetricKeyType
  if (type === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve
    if (curve === 'prime256v1') return {importAlg: EC_P256, signAlg: {name: 'ECDSA', hash: 'SHA-256'}}
    if (curve === 'secp384r1') return {importAlg: {name: 'ECDSA', namedCurve: 'P-384'}, signAlg: {name: 'ECDSA', hash: 'SHA-384'}}
    throw new Error(`unsupported EC curve ${curve}`)
  }
  if (type === 'rsa') {
    return {importAlg: {name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256'}, signAlg: {name: 'RSASSA-PKCS1-v1_5'}}
  }
  if (type === 'ed25519') return {importAlg: {name: 'Ed25519'}, signAlg: {name: 'Ed25519'}}
  throw new Error(`unsupported private key type ${type}`)
}

/** Imports a PEM private key (PKCS#8, SEC1 "EC PRIVATE KEY" or PKCS#1) with its public half. */
async function importKeyPair(keyPem: string): Promise<{keys: webcrypto.CryptoKeyPair; algorithm: SignAlgorithm}> {
  let keyObject: KeyObject
  try {
    keyObject = createPrivateKey(keyPem)
  } catch (e) {
    throw new Error(`invalid private key: ${(e as Error).message}`)
  }
  const {importAlg, signAlg} = keyAlgorithm(keyObject)
  const pkcs8 = keyObject.export({type: 'pkcs8', format: 'der'})
  const spki = createPublicKey(keyObject).export({type: 'spki', format: 'der'})
  const privateKey = await subtle.importKey('pkcs8', pkcs8, importAlg, true, ['sign'])
  const publicKey = await subtle.importKey('spki', spki, importAlg, true, ['verify'])
  return {keys: {privateKey, publicKey}, algorithm: signAlg}
}

async function generateKeyPair(): Promise<{keys: webcrypto.CryptoKeyPair; keyPem: string}> {
  const keys = (await subtle.generateKey(EC_P256, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair
  const pkcs8 = await subtle.exportKey('pkcs8', keys.privateKey)
  return {keys, keyPem: encodePEM(pkcs8, 'PRIVATE KEY')}
}

/** True when the private key is the one whose public key the certificate carries. */
export function keyMatchesCertificate(certPem: string, keyPem: string): boolean {
  try {
    const cert = new NodeX509Certificate(firstBlock(certPem, 'CERTIFICATE'))
    const fromKey = createPublicKey(createPrivateKey(keyPem)).export({type: 'spki', format: 'der'})
    return Buffer.compare(cert.publicKey.export({type: 'spki', format: 'der'}), fromKey) === 0
  } catch {
    return false
  }
}

// ---------------------------------------------------------------------------------------------- names

function subjectName(commonName: string, organizations: readonly string[] = []): x509.Name {
  // Go's pkix order: O before CN, one RDN per value.
  const rdns: Array<Record<string, string[]>> = organizations.map((o) => ({O: [o]}))
  if (commonName !== '') rdns.push({CN: [commonName]})
  return new x509.Name(rdns)
}

/** IP text in one canonical form (IPv6 compressed, lower case), so SAN sets compare equal. */
export function canonicalIP(ip: string): string {
  const bare = ip.replace(/^\[(.*)\]$/, '$1')
  if (isIP(bare) === 6) return new URL(`http://[${bare}]/`).hostname.slice(1, -1)
  return bare
}

interface SubjectAltNames {
  dnsNames?: readonly string[]
  ipAddresses?: readonly string[]
  emailAddresses?: readonly string[]
  uris?: readonly string[]
}

function sanExtension(names: SubjectAltNames, critical: boolean): x509.SubjectAlternativeNameExtension | null {
  const json: Array<{type: 'dns' | 'ip' | 'email' | 'url'; value: string}> = [
    ...(names.dnsNames ?? []).map((value) => ({type: 'dns' as const, value})),
    ...(names.ipAddresses ?? []).map((value) => {
      if (isIP(canonicalIP(value)) === 0) throw new Error(`invalid IP address ${JSON.stringify(value)}`)
      return {type: 'ip' as const, value: canonicalIP(value)}
    }),
    ...(names.emailAddresses ?? []).map((value) => ({type: 'email' as const, value})),
    ...(names.uris ?? []).map((value) => ({type: 'url' as const, value})),
  ]
  return json.length === 0 ? null : new x509.SubjectAlternativeNameExtension(json, critical)
}

function readSANs(extensions: readonly x509.Extension[]): Required<{[K in keyof SubjectAltNames]: string[]}> {
  const out = {dnsNames: [] as string[], ipAddresses: [] as string[], emailAddresses: [] as string[], uris: [] as string[]}
  for (const ext of extensions) {
    if (ext.type !== '2.5.29.17') continue
    const san = new x509.SubjectAlternativeNameExtension(ext.rawData)
    for (const name of san.names.items) {
      if (name.type === 'dns') out.dnsNames.push(name.value)
      else if (name.type === 'ip') out.ipAddresses.push(canonicalIP(name.value))
      else if (name.type === 'email') out.emailAddresses.push(name.value)
      else if (name.type === 'url') out.uris.push(name.value)
    }
  }
  return out
}

function randomSerial(): string {
  const bytes = randomBytes(16)
  bytes[0] = (bytes[0] & 0x3f) | 0x40 // positive, minimal DER, always 16 bytes
  return bytes.toString('hex')
}

// ---------------------------------------------------------------------------------------------- issuing

const BACKDATE_MS = 5 * 60 * 1000

/** Creates a self-signed CA (P-256): basic constraints CA, cert sign + CRL sign, subject key id. */
export async function createCA(commonName: string, validityDays = 3650): Promise<CertKeyPair> {
  const {keys, keyPem} = await generateKeyPair()
  const now = Date.now()
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: subjectName(commonName),
    notBefore: new Date(now - BACKDATE_MS),
    notAfter: new Date(now + validityDays * 86400_000),
    signingAlgorithm: {name: 'ECDSA', hash: 'SHA-256'},
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  })
  return {certPem: cert.toString('pem') + '\n', keyPem}
}

interface IssueParams extends SubjectAltNames {
  ca: CertKeyPair
  subject: x509.Name
  publicKey: x509.PublicKey | webcrypto.CryptoKey
  usages: readonly string[]
  notBefore?: Date
  validitySeconds: number
}

async function issue(params: IssueParams): Promise<string> {
  const caCert = new x509.X509Certificate(firstBlock(params.ca.certPem, 'CERTIFICATE'))
  const {keys: caKeys, algorithm} = await importKeyPair(params.ca.keyPem)
  const {keyUsage, extKeyUsages} = usageExtensions(params.usages)
  const now = Date.now()
  const notBefore = params.notBefore ?? new Date(Math.max(now - BACKDATE_MS, caCert.notBefore.getTime()))
  const start = params.notBefore ? params.notBefore.getTime() : now
  const notAfter = new Date(Math.min(start + params.validitySeconds * 1000, caCert.notAfter.getTime()))
  const caSki = caCert.getExtension(x509.SubjectKeyIdentifierExtension)
  const extensions: x509.Extension[] = [new x509.BasicConstraintsExtension(false, undefined, true)]
  if (keyUsage !== 0) extensions.push(new x509.KeyUsagesExtension(keyUsage, true))
  if (extKeyUsages.length > 0) extensions.push(new x509.ExtendedKeyUsageExtension(extKeyUsages, false))
  extensions.push(await x509.SubjectKeyIdentifierExtension.create(params.publicKey))
  extensions.push(caSki
    ? new x509.AuthorityKeyIdentifierExtension(caSki.keyId)
    : await x509.AuthorityKeyIdentifierExtension.create(caCert.publicKey))
  const san = sanExtension(params, params.subject.toJSON().length === 0)
  if (san) extensions.push(san)
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: params.subject,
    issuer: caCert.subjectName,
    notBefore,
    notAfter,
    publicKey: params.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: algorithm,
    extensions,
  })
  return cert.toString('pem') + '\n'
}

export interface SignedCertOptions extends SubjectAltNames {
  ca: CertKeyPair
  commonName: string
  organizations?: readonly string[]
  usages: readonly CertificateUsage[]
  /** default: now less 5 minutes (not before the CA's own notBefore) */
  notBefore?: Date
  /** lifetime, from notBefore when given, else from now; capped at the CA's notAfter */
  validitySeconds: number
}

/** Creates a new P-256 key and a certificate for it signed by `ca`. */
export async function createSignedCert(options: SignedCertOptions): Promise<CertKeyPair> {
  const {keys, keyPem} = await generateKeyPair()
  const certPem = await issue({
    ...options,
    subject: subjectName(options.commonName, options.organizations),
    publicKey: keys.publicKey,
  })
  return {certPem, keyPem}
}

export interface CSROptions extends SubjectAltNames {
  commonName: string
  organizations?: readonly string[]
  /** sign with this key instead of a new P-256 key */
  keyPem?: string
}

/** Creates a PKCS#10 request (SANs in an extensionRequest attribute), with a new key unless given. */
export async function createCSR(options: CSROptions): Promise<{csrPem: string; keyPem: string}> {
  const generated = options.keyPem === undefined ? await generateKeyPair() : undefined
  const imported = options.keyPem === undefined ? undefined : await importKeyPair(options.keyPem)
  const keys = (generated?.keys ?? imported?.keys) as webcrypto.CryptoKeyPair
  const san = sanExtension(options, false)
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: subjectName(options.commonName, options.organizations),
    keys,
    signingAlgorithm: imported?.algorithm ?? {name: 'ECDSA', hash: 'SHA-256'},
    extensions: san ? [san] : [],
  })
  return {csrPem: csr.toString('pem') + '\n', keyPem: generated?.keyPem ?? (options.keyPem as string)}
}

// ---------------------------------------------------------------------------------------------- parsing

function firstBlock(pem: string, type: string): Buffer {
  const blocks = decodePEM(pem)
  if (blocks.length === 0) throw new Error(`PEM block type must be ${type}: no PEM block found`)
  if (blocks[0].type !== type) throw new Error(`PEM block type must be ${type}, found ${JSON.stringify(blocks[0].type)}`)
  return blocks[0].bytes
}

export interface ParsedCSR extends Required<{[K in keyof SubjectAltNames]: string[]}> {
  /** the subject as RFC 4514 text */
  subject: string
  commonName: string
  organizations: string[]
  /** SubjectPublicKeyInfo, PEM "PUBLIC KEY" */
  publicKey: string
  /** e.g. ECDSA, RSASSA-PKCS1-v1_5, Ed25519 */
  publicKeyAlgorithm: string
  /** the signature verifies with the request's own public key */
  signatureValid: boolean
}

const SIGNATURE_HASHES: Record<string, string | null> = {
  '1.2.840.10045.4.3.2': 'sha256', '1.2.840.10045.4.3.3': 'sha384', '1.2.840.10045.4.3.4': 'sha512',
  '1.2.840.113549.1.1.11': 'sha256', '1.2.840.113549.1.1.12': 'sha384', '1.2.840.113549.1.1.13': 'sha512',
  '1.3.101.112': null,
}

function checkCSRSignature(der: Buffer, spki: Buffer): boolean {
  try {
    const [info, algorithm, signature] = children(der, readTlv(der, 0))
    const oidTlv = children(der, algorithm)[0]
    const oid = decodeOID(der.subarray(oidTlv.contentStart, oidTlv.end))
    if (!(oid in SIGNATURE_HASHES) || signature.tag !== 0x03) return false
    const key = createPublicKey({key: spki, format: 'der', type: 'spki'})
    const sig = der.subarray(signature.contentStart + 1, signature.end) // skip the unused-bits octet
    return nodeVerify(SIGNATURE_HASHES[oid], der.subarray(info.start, info.end), key, sig)
  } catch {
    return false
  }
}

function readCSR(pem: string): {csr: x509.Pkcs10CertificateRequest; parsed: ParsedCSR} {
  const der = firstBlock(pem, 'CERTIFICATE REQUEST')
  try {
    const csr = new x509.Pkcs10CertificateRequest(new Uint8Array(der))
    if (readTlv(der, 0).end !== der.length) throw new Error('trailing data after the request')
    const spki = Buffer.from(csr.publicKey.rawData)
    const parsed: ParsedCSR = {
      subject: csr.subject,
      commonName: csr.subjectName.getField('CN')[0] ?? '',
      organizations: csr.subjectName.getField('O'),
      ...readSANs(csr.extensions),
      publicKey: encodePEM(spki, 'PUBLIC KEY'),
      publicKeyAlgorithm: csr.publicKey.algorithm.name,
      signatureValid: checkCSRSignature(der, spki),
    }
    return {csr, parsed}
  } catch (e) {
    throw new Error(`invalid certificate request: ${(e as Error).message}`)
  }
}

/** Parses the first PEM block of `pem` as a CERTIFICATE REQUEST. Throws on bad PEM, label or DER. */
export function parseCSR(pem: string): ParsedCSR {
  return readCSR(pem).parsed
}

export interface SignCSROptions {
  ca: CertKeyPair
  csrPem: string
  /** certificates API usage names; an unknown one throws */
  usages: readonly string[]
  validitySeconds: number
  notBefore?: Date
}

/** Issues a certificate for a request: its subject, SANs and public key, the given usages. */
export async function signCSR(options: SignCSROptions): Promise<string> {
  const {csr, parsed} = readCSR(options.csrPem)
  if (!parsed.signatureValid) throw new Error('unable to verify certificate request signature')
  return issue({
    ca: options.ca,
    usages: options.usages,
    validitySeconds: options.validitySeconds,
    notBefore: options.notBefore,
    dnsNames: parsed.dnsNames,
    ipAddresses: parsed.ipAddresses,
    emailAddresses: parsed.emailAddresses,
    uris: parsed.uris,
    subject: csr.subjectName,
    publicKey: csr.publicKey,
  })
}

export interface ParsedCertificate {
  subject: string
  commonName: string
  organizations: string[]
  issuer: string
  issuerCommonName: string
  serialNumber: string
  notBefore: Date
  notAfter: Date
  /** certificates API usage names, key usages then extended key usages, in the API's order */
  usages: string[]
  dnsNames: string[]
  ipAddresses: string[]
  emailAddresses: string[]
  uris: string[]
  isCA: boolean
}

/** Parses the first CERTIFICATE block of `pem`. */
export function parseCertificate(pem: string): ParsedCertificate {
  const der = firstBlock(pem, 'CERTIFICATE')
  let cert: x509.X509Certificate
  try {
    cert = new x509.X509Certificate(new Uint8Array(der))
  } catch (e) {
    throw new Error(`invalid certificate: ${(e as Error).message}`)
  }
  const usages: string[] = []
  const ku = cert.getExtension(x509.KeyUsagesExtension)
  if (ku) for (const [name, flag] of KEY_USAGES) if (ku.usages & flag) usages.push(name)
  const eku = cert.getExtension(x509.ExtendedKeyUsageExtension)
  if (eku) {
    const oids = eku.usages.map(String)
    for (const [name, oid] of EXT_KEY_USAGES) if (oids.includes(oid)) usages.push(name)
  }
  const {dnsNames, ipAddresses, emailAddresses, uris} = readSANs(cert.extensions)
  return {
    subject: cert.subject,
    commonName: cert.subjectName.getField('CN')[0] ?? '',
    organizations: cert.subjectName.getField('O'),
    issuer: cert.issuer,
    issuerCommonName: cert.issuerName.getField('CN')[0] ?? '',
    serialNumber: cert.serialNumber,
    notBefore: cert.notBefore,
    notAfter: cert.notAfter,
    usages,
    dnsNames,
    ipAddresses,
    emailAddresses,
    uris,
    isCA: cert.getExtension(x509.BasicConstraintsExtension)?.ca ?? false,
  }
}

/**
 * True when the first certificate of `certPem` was issued and signed by one of the CA certificates
 * in `caPem` (a bundle), that CA is a CA, and both are valid at `at` (default now). Never throws.
 */
export function verifyCertificate(certPem: string, caPem: string, at: Date = new Date()): boolean {
  try {
    const cert = new NodeX509Certificate(firstBlock(certPem, 'CERTIFICATE'))
    const validAt = (c: NodeX509Certificate) =>
      new Date(c.validFrom).getTime() <= at.getTime() && at.getTime() <= new Date(c.validTo).getTime()
    if (!validAt(cert)) return false
    for (const block of decodePEM(caPem)) {
      if (block.type !== 'CERTIFICATE') continue
      const ca = new NodeX509Certificate(block.bytes)
      if (ca.ca && validAt(ca) && cert.checkIssued(ca) && cert.verify(ca.publicKey)) return true
    }
    return false
  } catch {
    return false
  }
}

/**
 * Validates `status.certificate` of a CertificateSigningRequest as Kubernetes does: one or more PEM
 * blocks, each labelled CERTIFICATE, without headers, each holding DER X.509 certificates; text
 * around the blocks is allowed (RFC 7468 §5.2). Empty text is valid (no certificate issued yet).
 * Returns the errors found (at most one), empty when valid.
 */
export function validateCertificatePEM(text: string): string[] {
  if (text.length === 0) return []
  const blocks = decodePEM(text)
  if (blocks.length === 0) return ['must contain at least one CERTIFICATE PEM block']
  for (const block of blocks) {
    if (block.type !== 'CERTIFICATE') return [`only CERTIFICATE PEM blocks are allowed, found ${JSON.stringify(block.type)}`]
    if (Object.keys(block.headers).length > 0) return ['no PEM block headers are permitted']
    if (block.bytes.length === 0) return ['found CERTIFICATE PEM block containing 0 certificates']
    try {
      for (let off = 0; off < block.bytes.length; ) {
        const tlv = readTlv(block.bytes, off)
        if (tlv.tag !== 0x30) throw new Error('not a DER SEQUENCE')
        new NodeX509Certificate(block.bytes.subarray(tlv.start, tlv.end))
        off = tlv.end
      }
    } catch (e) {
      return [`x509: malformed certificate: ${(e as Error).message}`]
    }
  }
  return []
}
