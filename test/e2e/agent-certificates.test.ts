// The agent's TLS bootstrap and client certificate rotation against a real server: the bootstrap
// token obtains a certificate for system:node:<name>; a rotation asks again with the node's own
// identity (selfnodeclient), replaces the file, and the new credentials work.
import assert from 'node:assert/strict'
import {readFileSync, rmSync, statSync} from 'node:fs'
import {join} from 'node:path'
import {after, before, describe, it} from 'node:test'
import {CLIENT_PAIR_FILE, ClientCertificateManager} from '../../src/agent/certificates.js'
import {RestClient, type ClientConfig} from '../../src/client/index.js'
import {createLogger} from '../../src/machinery/log.js'
import {parseCertificate} from '../../src/machinery/pki.js'
import {BOOTSTRAP_TOKEN, writeBootstrapKubeconfig} from '../support/agent.js'
import {startOrchServer, tempDir, type OrchServer} from '../support/server.js'

describe('agent client certificates', {timeout: 60_000}, () => {
  let server: OrchServer
  let dir: string
  const quiet = createLogger({write: () => undefined})

  before(async () => {
    server = await startOrchServer(['--bootstrap-token', BOOTSTRAP_TOKEN])
    dir = tempDir('orch-agent-certs-')
  })
  after(async () => {
    await server?.cleanup()
    rmSync(dir, {recursive: true, force: true})
  })

  async function whoami(config: ClientConfig): Promise<any> {
    const client = new RestClient(config)
    try {
      return await client.create({group: 'authentication.orch.io', version: 'v1', resource: 'selfsubjectreviews'}, {apiVersion: 'authentication.orch.io/v1', kind: 'SelfSubjectReview'})
    } finally {
      await client.close()
    }
  }

  it('with a bootstrap token the agent obtains CN system:node:<name>, O system:nodes, and renews it with its own identity', async () => {
    writeBootstrapKubeconfig(server, join(dir, 'bootstrap.kubeconfig'))
    let rotated: ClientConfig | undefined
    const manager = new ClientCertificateManager({
      nodeName: 'node-cert',
      certDir: join(dir, 'pki'),
      kubeconfigPath: join(dir, 'agent.kubeconfig'),
      bootstrapKubeconfigPath: join(dir, 'bootstrap.kubeconfig'),
      rotate: false,
      logger: quiet,
      onRotated: (config) => (rotated = config),
    })
    const config = await manager.load()
    assert.ok(config?.cert)
    const first = parseCertificate(config.cert.toString())
    assert.equal(first.commonName, 'system:node:node-cert')
    assert.deepEqual(first.organizations, ['system:nodes'])
    assert.equal(statSync(join(dir, 'pki', CLIENT_PAIR_FILE)).mode & 0o777, 0o600)
    const review = await whoami(config)
    assert.equal(review.status.userInfo.username, 'system:node:node-cert')

    await manager.rotate()
    assert.ok(rotated?.cert)
    const second = parseCertificate(rotated.cert.toString())
    assert.equal(second.commonName, 'system:node:node-cert')
    assert.notEqual(second.serialNumber, first.serialNumber)
    assert.equal(parseCertificate(readFileSync(join(dir, 'pki', CLIENT_PAIR_FILE), 'utf8')).serialNumber, second.serialNumber)
    assert.equal((await whoami(rotated)).status.userInfo.username, 'system:node:node-cert')
    manager.stop()

    // a second start finds the kubeconfig and its certificate still valid: no new request
    const again = new ClientCertificateManager({nodeName: 'node-cert', certDir: join(dir, 'pki'), kubeconfigPath: join(dir, 'agent.kubeconfig'), bootstrapKubeconfigPath: join(dir, 'bootstrap.kubeconfig'), rotate: false, logger: quiet})
    const loaded = await again.load()
    assert.equal(parseCertificate(loaded!.cert!.toString()).serialNumber, second.serialNumber)
  })

  it('a bootstrap token the server does not know is refused with one clear error', async () => {
    writeBootstrapKubeconfig(server, join(dir, 'bad.kubeconfig'), 'zzzzzz.0123456789zzzzzz')
    const manager = new ClientCertificateManager({nodeName: 'node-bad', certDir: join(dir, 'pki-bad'), kubeconfigPath: join(dir, 'bad-agent.kubeconfig'), bootstrapKubeconfigPath: join(dir, 'bad.kubeconfig'), rotate: false, logger: quiet})
    await assert.rejects(manager.load(), /Unauthorized/i)
  })
})
