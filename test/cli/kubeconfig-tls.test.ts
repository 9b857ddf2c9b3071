// A kubeconfig whose certificate or key data is not what it should be fails every command with kubectl's
// one line (Go's tls.X509KeyPair, client-go's TLSConfigFor), not an OpenSSL decoder code.
import assert from 'node:assert/strict'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, it} from 'node:test'
import * as yaml from 'js-yaml'
import {tempDir} from '../support/server.js'
import {caCert, clientCert, clientKey, serverKey} from '../client/tls-fixtures.js'
import {orchPlain} from './support.js'

const dir = tempDir('orch-cli-kubeconfig-tls-')
const base64 = (text: string) => Buffer.from(text).toString('base64')

function kubeconfigWith(name: string, user: {cert: string; key: string}, ca = caCert): string {
  const path = join(dir, name)
  writeFileSync(
    path,
    yaml.dump({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{name: 'c', cluster: {server: 'https://127.0.0.1:1', 'certificate-authority-data': base64(ca)}}],
      users: [{name: 'u', user: {'client-certificate-data': base64(user.cert), 'client-key-data': base64(user.key)}}],
      contexts: [{name: 'c', context: {cluster: 'c', user: 'u'}}],
      'current-context': 'c',
    }),
  )
  return path
}

describe('kubeconfig TLS data', () => {
  const cases: [string, string, string][] = [
    ['client-key-data that is not PEM', kubeconfigWith('bad-key', {cert: clientCert, key: 'garbage'}), 'error: tls: failed to find any PEM data in key input'],
    ['client-certificate-data that is not PEM', kubeconfigWith('bad-cert', {cert: 'garbage', key: clientKey}), 'error: tls: failed to find any PEM data in certificate input'],
    ['a key that is not the certificate\'s', kubeconfigWith('mismatch', {cert: clientCert, key: serverKey}), 'error: tls: private key does not match public key'],
    ['certificate-authority-data that is not PEM', kubeconfigWith('bad-ca', {cert: clientCert, key: clientKey}, 'garbage'), 'error: unable to load root certificates: unable to parse bytes as PEM block'],
  ]
  for (const [what, kubeconfig, expected] of cases) {
    it(`"tls.X509KeyPair / TLSConfigFor refuse it before any request": ${what} is kubectl's one line, exit 1`, async () => {
      const result = await orchPlain(['get', 'pods', '--kubeconfig', kubeconfig])
      assert.equal(result.code, 1)
      assert.equal(result.stdout, '')
      assert.equal(result.stderr, `${expected}\n`)
    })
  }
})
