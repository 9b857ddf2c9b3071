// csrapproving: approves agent client certificate requests (signer orch.io/apiserver-client-agent)
// when they are well formed and their requestor may ask: the node renewing its own certificate
// (CN = requestor, permission `create certificatesigningrequests/selfnodeclient`) or a bootstrapper
// (permission `create certificatesigningrequests/nodeclient`), checked with a SubjectAccessReview,
// as Kubernetes' sarapprove does. Nothing else is ever auto-approved.
import type {AnyObject} from '../api/types.js'
import {ApiStatusError, type RestClient} from '../client/index.js'
import type {Logger} from '../machinery/log.js'
import {parseCSR} from '../machinery/pki.js'
import type {ReconcileResult} from './controller.js'
import {WatchedKind} from './watched-kind.js'
import {agentClientProblem, hasCondition, requestPem, SIGNER_AGENT_CLIENT} from './csr-rules.js'
import {CSR_LOCATOR} from './csrsigning.js'

function pending(csr: AnyObject): boolean {
  return csr.spec?.signerName === SIGNER_AGENT_CLIENT && !hasCondition(csr, 'Approved') && !hasCondition(csr, 'Denied')
}

export class CSRApprovingController {
  private readonly watched: WatchedKind

  constructor(
    private readonly client: RestClient,
    private readonly logger: Logger,
  ) {
    this.watched = new WatchedKind(client, {
      name: 'csrapproving',
      locator: CSR_LOCATOR,
      logger,
      workers: 2,
      wants: (csr: AnyObject) => pending(csr),
      reconcile: (key) => this.reconcile(key),
    })
  }

  start(): Promise<void> {
    return this.watched.start()
  }

  stop(): Promise<void> {
    return this.watched.stop()
  }

  private async allowed(csr: AnyObject, subresource: string): Promise<boolean> {
    const spec = csr.spec ?? {}
    const review = await this.client.create<AnyObject>(
      {group: 'authorization.orch.io', version: 'v1', resource: 'subjectaccessreviews'},
      {
        apiVersion: 'authorization.orch.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: spec.username,
          uid: spec.uid,
          groups: spec.groups,
          extra: spec.extra,
          resourceAttributes: {group: 'certificates.orch.io', resource: 'certificatesigningrequests', verb: 'create', subresource},
        },
      },
    )
    return review.status?.allowed === true
  }

  async reconcile(name: string): Promise<ReconcileResult | void> {
    const csr = this.watched.informer.get(name)
    if (!csr || !pending(csr)) return
    let commonName: string
    try {
      const request = parseCSR(requestPem(csr))
      if (agentClientProblem(request, csr.spec.usages ?? [])) return // not an agent client request: a human decides
      commonName = request.commonName
    } catch {
      return
    }
    const self = csr.spec.username === commonName
    const permitted = self ? await this.allowed(csr, 'selfnodeclient') : await this.allowed(csr, 'nodeclient')
    if (!permitted) return
    const message = self ? 'Auto approving self agent client certificate after SubjectAccessReview.' : 'Auto approving agent client certificate after SubjectAccessReview.'
    const conditions = [...(csr.status?.conditions ?? []), {type: 'Approved', status: 'True', reason: 'AutoApproved', message}]
    try {
      await this.client.update({...CSR_LOCATOR, name, subresource: 'approval'}, {...csr, status: {...(csr.status ?? {}), conditions}})
      this.logger.info('approved', {csr: name, requestor: csr.spec.username})
    } catch (error) {
      if (error instanceof ApiStatusError && (error.code === 409 || error.code === 404)) return
      throw error
    }
  }
}
