import 'reflect-metadata'
import {before, describe, it} from 'node:test'
import assert from 'node:assert/strict'
import {createPrivateKey, createPublicKey, X509Certificate} from 'node:crypto'
import * as x509 from '@peculiar/x509'
import {
  createCA,
  createCSR,
  createSignedCert,
  decodePEM,
  encodePEM,
  keyMatchesCertificate,
  KNOWN_USAGES,
  parseCertificate,
  parseCSR,
  signCSR,
  usageExtensions,
  validateCertificatePEM,
  verifyCertificate,
  type CertKeyPair,
} from '../../src/machinery/pki.js'

let ca: CertKeyPair
let otherCA: CertKeyPair

before(async () => {
  ca = await createCA('orch-test-ca', 30)
  otherCA = await createCA('other-ca', 30)
})

function spkiOfKey(keyPem: string): Buffer {
  return createPublicKey(createPrivateKey(keyPem)).export({type: 'spki', format: 'der'})
}

function near(actual: Date, expected: number, slackMs = 3000): void {
  assert.ok(Math.abs(actual.getTime() - expected) <= slackMs, `${actual.toISOString()} is not near ${new Date(expected).toISOString()}`)
}

describe('createCA and createSignedCert', () => {
  it('creates a self-signed P-256 CA', () => {
    const parsed = parseCertificate(ca.certPem)
    assert.equal(parsed.commonName, 'orch-test-ca')
    assert.equal(parsed.issuerCommonName, 'orch-test-ca')
    assert.equal(parsed.isCA, true)
    assert.deepEqual(parsed.usages, ['digital signature', 'cert sign', 'crl sign'])
    near(parsed.notAfter, Date.now() + 30 * 86400_000)
    assert.ok(verifyCertificate(ca.certPem, ca.certPem))
    assert.ok(keyMatchesCertificate(ca.certPem, ca.keyPem))
    assert.equal(createPrivateKey(ca.keyPem).asymmetricKeyDetails?.namedCurve, 'prime256v1')
    assert.match(ca.keyPem, /^-----BEGIN PRIVATE KEY-----\n/)
  })

  it('issues certificates that verify against their CA only', async () => {
    const leaf = await createSignedCert({
      ca,
      commonName: 'orch-admin',
      organizations: ['system:masters', 'team-a'],
      dnsNames: ['localhost'],
      ipAddresses: ['127.0.0.1', '2001:DB8:0:0::1'],
      usages: ['digital signature', 'key encipherment', 'client auth'],
      validitySeconds: 3600,
    })
    const parsed = parseCertificate(leaf.certPem)
    assert.equal(parsed.commonName, 'orch-admin')
    assert.deepEqual(parsed.organizations, ['system:masters', 'team-a'])
    assert.equal(parsed.issuerCommonName, 'orch-test-ca')
    assert.equal(parsed.isCA, false)
    assert.deepEqual(parsed.usages, ['digital signature', 'key encipherment', 'client auth'])
    assert.deepEqual(parsed.dnsNames, ['localhost'])
    assert.deepEqual(parsed.ipAddresses, ['127.0.0.1', '2001:db8::1'])
    assert.ok(verifyCertificate(leaf.certPem, ca.certPem))
    assert.ok(verifyCertificate(leaf.certPem, otherCA.certPem + ca.certPem), 'a bundle holding the CA')
    assert.equal(verifyCertificate(leaf.certPem, otherCA.certPem), false)
    assert.equal(verifyCertificate(leaf.certPem, leaf.certPem), false, 'a leaf is no CA')
    assert.equal(verifyCertificate(leaf.certPem, ca.certPem, new Date(Date.now() + 7200_000)), false, 'expired by then')
    assert.ok(new X509Certificate(leaf.certPem).checkIssued(new X509Certificate(ca.certPem)))
    assert.ok(keyMatchesCertificate(leaf.certPem, leaf.keyPem))
    assert.equal(keyMatchesCertificate(leaf.certPem, ca.keyPem), false)
  })

  it('serials are random and positive', async () => {
    const a = await createSignedCert({ca, commonName: 'a', usages: ['client auth'], validitySeconds: 60})
    const b = await createSignedCert({ca, commonName: 'a', usages: ['client auth'], validitySeconds: 60})
    const [sa, sb] = [parseCertificate(a.certPem).serialNumber, parseCertificate(b.certPem).serialNumber]
    assert.notEqual(sa, sb)
    assert.equal(sa.length, 32)
    assert.ok(parseInt(sa.slice(0, 2), 16) < 0x80)
  })

  it('an expired certificate does not verify', async () => {
    const expired = await createSignedCert({
      ca, commonName: 'late', usages: ['client auth'], notBefore: new Date(Date.now() - 7200_000), validitySeconds: 3600,
    })
    assert.equal(verifyCertificate(expired.certPem, ca.certPem), false)
    near(parseCertificate(expired.certPem).notAfter, Date.now() - 3600_000)
    assert.ok(new X509Certificate(expired.certPem).verify(new X509Certificate(ca.certPem).publicKey), 'the signature itself is good')
  })
})

describe('CSRs', () => {
  it('round-trips subject and SANs', async () => {
    const {csrPem, keyPem} = await createCSR({
      commonName: 'system:node:n1',
      organizations: ['system:nodes'],
      dnsNames: ['n1.example', 'n1'],
      ipAddresses: ['10.0.0.7', 'fd00::7'],
      emailAddresses: ['ops@example.com'],
      uris: ['spiffe://cluster/ns/x'],
    })
    assert.match(csrPem, /^-----BEGIN CERTIFICATE REQUEST-----\n/)
    const parsed = parseCSR(csrPem)
    assert.equal(parsed.commonName, 'system:node:n1')
    assert.deepEqual(parsed.organizations, ['system:nodes'])
    assert.deepEqual(parsed.dnsNames, ['n1.example', 'n1'])
    assert.deepEqual(parsed.ipAddresses, ['10.0.0.7', 'fd00::7'])
    assert.deepEqual(parsed.emailAddresses, ['ops@example.com'])
    assert.deepEqual(parsed.uris, ['spiffe://cluster/ns/x'])
    assert.equal(parsed.signatureValid, true)
    assert.equal(parsed.publicKeyAlgorithm, 'ECDSA')
    assert.deepEqual(decodePEM(parsed.publicKey)[0].bytes, spkiOfKey(keyPem))
  })

  it('signs with a given key', async () => {
    const {csrPem, keyPem} = await createCSR({commonName: 'bob', organizations: [], keyPem: ca.keyPem})
    assert.equal(keyPem, ca.keyPem)
    assert.deepEqual(decodePEM(parseCSR(csrPem).publicKey)[0].bytes, spkiOfKey(ca.keyPem))
    assert.equal(parseCSR(csrPem).signatureValid, true)
  })

  it('signatureValid is false when the public key was swapped', async () => {
    const {csrPem} = await createCSR({commonName: 'mallory', organizations: ['system:masters']})
    const {keyPem: otherKey} = await createCSR({commonName: 'x', organizations: []})
    const der = decodePEM(csrPem)[0].bytes
    const original = decodePEM(parseCSR(csrPem).publicKey)[0].bytes
    const replacement = spkiOfKey(otherKey)
    assert.equal(original.length, replacement.length)
    const at = der.indexOf(original)
    assert.ok(at > 0)
    const forged = Buffer.concat([der.subarray(0, at), replacement, der.subarray(at + original.length)])
    const forgedPem = encodePEM(forged, 'CERTIFICATE REQUEST')
    const parsed = parseCSR(forgedPem)
    assert.equal(parsed.commonName, 'mallory')
    assert.deepEqual(decodePEM(parsed.publicKey)[0].bytes, replacement)
    assert.equal(parsed.signatureValid, false)
    await assert.rejects(signCSR({ca, csrPem: forgedPem, usages: ['client auth'], validitySeconds: 60}), /signature/)
  })

  it('parseCSR throws clear errors', () => {
    assert.throws(() => parseCSR('not pem at all'), /PEM block type must be CERTIFICATE REQUEST: no PEM block found/)
    assert.throws(() => parseCSR(ca.certPem), /PEM block type must be CERTIFICATE REQUEST, found "CERTIFICATE"/)
    assert.throws(() => parseCSR(encodePEM(Buffer.from('garbage, not DER'), 'CERTIFICATE REQUEST')), /invalid certificate request/)
  })
})

describe('signCSR', () => {
  it('copies subject and SANs, honours usages and validity, names its issuer', async () => {
    const {csrPem, keyPem} = await createCSR({commonName: 'system:node:n1', organizations: ['system:nodes'], dnsNames: ['n1'], ipAddresses: ['10.0.0.1']})
    const certPem = await signCSR({ca, csrPem, usages: ['signing', 'key encipherment', 'server auth'], validitySeconds: 600})
    const parsed = parseCertificate(certPem)
    assert.equal(parsed.commonName, 'system:node:n1')
    assert.deepEqual(parsed.organizations, ['system:nodes'])
    assert.deepEqual(parsed.dnsNames, ['n1'])
    assert.deepEqual(parsed.ipAddresses, ['10.0.0.1'])
    assert.deepEqual(parsed.usages, ['digital signature', 'key encipherment', 'server auth'])
    assert.equal(parsed.isCA, false)
    near(parsed.notAfter, Date.now() + 600_000)
    near(parsed.notBefore, Date.now() - 300_000)
    assert.ok(verifyCertificate(certPem, ca.certPem))
    assert.ok(keyMatchesCertificate(certPem, keyPem))
    const cert = new x509.X509Certificate(certPem)
    const caSki = new x509.X509Certificate(ca.certPem).getExtension(x509.SubjectKeyIdentifierExtension)
    assert.equal(cert.getExtension(x509.AuthorityKeyIdentifierExtension)?.keyId, caSki?.keyId)
    assert.ok(cert.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId)
  })

  it('client auth only, with a chosen start', async () => {
    const {csrPem} = await createCSR({commonName: 'jane', organizations: ['devs']})
    const notBefore = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000)
    const parsed = parseCertificate(await signCSR({ca, csrPem, usages: ['client auth'], validitySeconds: 3600, notBefore}))
    assert.deepEqual(parsed.usages, ['client auth'])
    assert.equal(parsed.notBefore.getTime(), notBefore.getTime())
    assert.equal(parsed.notAfter.getTime(), notBefore.getTime() + 3600_000)
  })

  it('never outlives the CA', async () => {
    const shortCA = await createCA('short', 1)
    const {csrPem} = await createCSR({commonName: 'x', organizations: []})
    const parsed = parseCertificate(await signCSR({ca: shortCA, csrPem, usages: ['client auth'], validitySeconds: 30 * 86400}))
    assert.equal(parsed.notAfter.getTime(), parseCertificate(shortCA.certPem).notAfter.getTime())
  })

  it('rejects unknown usages', async () => {
    const {csrPem} = await createCSR({commonName: 'x', organizations: []})
    await assert.rejects(signCSR({ca, csrPem, usages: ['client auth', 'world domination'], validitySeconds: 60}), /unrecognized usage: "world domination"/)
  })

  it('maps usage names as the Kubernetes signer does', () => {
    assert.doesNotThrow(() => usageExtensions(KNOWN_USAGES))
    assert.deepEqual(usageExtensions(['signing', 'digital signature', 'cert sign']), {keyUsage: 1 | 32, extKeyUsages: []})
    assert.deepEqual(usageExtensions(['s/mime', 'email protection', 'any', 'ocsp signing']).extKeyUsages,
      ['1.3.6.1.5.5.7.3.4', '2.5.29.37.0', '1.3.6.1.5.5.7.3.9'])
  })
})

describe('validateCertificatePEM', () => {
  let leafPem: string
  before(async () => {
    leafPem = (await createSignedCert({ca, commonName: 'leaf', usages: ['client auth'], validitySeconds: 600})).certPem
  })

  it('accepts one or more CERTIFICATE blocks, with text around them', () => {
    assert.deepEqual(validateCertificatePEM(leafPem), [])
    assert.deepEqual(validateCertificatePEM(leafPem + ca.certPem), [])
    assert.deepEqual(validateCertificatePEM(`Issued by orch-test-ca\n${leafPem}\nchain follows:\n${ca.certPem}trailing words`), [])
    assert.deepEqual(validateCertificatePEM(''), [], 'empty: no certificate issued yet')
  })

  it('accepts concatenated DER certificates in one block', () => {
    const der = Buffer.concat([decodePEM(leafPem)[0].bytes, decodePEM(ca.certPem)[0].bytes])
    assert.deepEqual(validateCertificatePEM(encodePEM(der, 'CERTIFICATE')), [])
  })

  it('rejects text without blocks', () => {
    assert.deepEqual(validateCertificatePEM('just words'), ['must contain at least one CERTIFICATE PEM block'])
  })

  it('rejects headers', () => {
    const withHeader = leafPem.replace('-----BEGIN CERTIFICATE-----\n', '-----BEGIN CERTIFICATE-----\nProc-Type: 4,ENCRYPTED\n\n')
    assert.equal(decodePEM(withHeader)[0].headers['Proc-Type'], '4,ENCRYPTED')
    assert.deepEqual(validateCertificatePEM(withHeader), ['no PEM block headers are permitted'])
  })

  it('rejects other labels, even next to a certificate', () => {
    const {keyPem} = ca
    assert.deepEqual(validateCertificatePEM(leafPem + keyPem), ['only CERTIFICATE PEM blocks are allowed, found "PRIVATE KEY"'])
    assert.deepEqual(validateCertificatePEM(encodePEM(decodePEM(leafPem)[0].bytes, 'CERTIFICATE REQUEST')),
      ['only CERTIFICATE PEM blocks are allowed, found "CERTIFICATE REQUEST"'])
  })

  it('rejects garbage DER', () => {
    const [error] = validateCertificatePEM(encodePEM(Buffer.from('this is not a certificate at all'), 'CERTIFICATE'))
    assert.match(error, /^x509: malformed certificate/)
    const truncated = decodePEM(leafPem)[0].bytes.subarray(0, 100)
    assert.match(validateCertificatePEM(encodePEM(truncated, 'CERTIFICATE'))[0], /^x509: malformed certificate/)
    const sequence = Buffer.from([0x30, 0x03, 0x02, 0x01, 0x01])
    assert.match(validateCertificatePEM(encodePEM(sequence, 'CERTIFICATE'))[0], /^x509: malformed certificate/)
    assert.deepEqual(validateCertificatePEM('-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n'),
      ['found CERTIFICATE PEM block containing 0 certificates'])
  })
})

describe('decodePEM', () => {
  it('skips blocks whose body is not base64 and blocks not at a line start', () => {
    const text = `x -----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n` +
      `-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n` +
      `-----BEGIN FOO-----\r\nAAEC\r\n-----END FOO-----\r\n`
    const blocks = decodePEM(text)
    assert.equal(blocks.length, 1)
    assert.equal(blocks[0].type, 'FOO')
    assert.deepEqual([...blocks[0].bytes], [0, 1, 2])
  })
})
