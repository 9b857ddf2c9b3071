// csrsigning: issues the certificates of approved requests for the well-known signers with the
// cluster CA, for min(spec.expirationSeconds, --cluster-signing-duration); a request its signer may
// not issue (subject, SANs, usages) gets a Failed condition instead. Requests for other signers are
// left alone, for a signer outside the server.
import type {AnyObject} from '../api/types.js'
import {ApiStatusError, type RestClient} from '../client/index.js'
import type {Logger} from '../machinery/log.js'
import {signCSR, type CertKeyPair} from '../machinery/pki.js'
import type {ReconcileResult} from './controller.js'
import {WatchedKind} from './watched-kind.js'
import {hasCondition, requestPem, signerProblem, WELL_KNOWN_SIGNERS} from './csr-rules.js'

export const CSR_LOCATOR = {group: 'certificates.orch.io', version: 'v1', resource: 'certificatesigningrequests'} as const
export const DEFAULT_CLUSTER_SIGNING_DURATION_MS = 365 * 24 * 3600_000

export interface CSRSigningOptions {
  /** the cluster CA */
  ca: CertKeyPair
  /** --cluster-signing-duration */
  maxDurationMs?: number
  now?: () => Date
}

function needsSigning(csr: AnyObject): boolean {
  return (
    (WELL_KNOWN_SIGNERS as readonly string[]).includes(csr.spec?.signerName) &&
    hasCondition(csr, 'Approved') &&
    !hasCondition(csr, 'Denied') &&
    !hasCondition(csr, 'Failed') &&
    !csr.status?.certificate
  )
}

export class CSRSigningController {
  private readonly watched: WatchedKind

  constructor(
    private readonly client: RestClient,
    private readonly logger: Logger,
    private readonly options: CSRSigningOptions,
  ) {
    this.watched = new WatchedKind(client, {
      name: 'csrsigning',
      locator: CSR_LOCATOR,
      logger,
      workers: 2,
      wants: (csr: AnyObject) => needsSigning(csr),
      reconcile: (key) => this.reconcile(key),
    })
  }

  start(): Promise<void> {
    return this.watched.start()
  }

  stop(): Promise<void> {
    return this.watched.stop()
  }

  /** The validity given: what was asked, at most the configured maximum (Kubernetes' duration logic). */
  validitySeconds(csr: AnyObject): number {
    const maxSeconds = Math.floor((this.options.maxDurationMs ?? DEFAULT_CLUSTER_SIGNING_DURATION_MS) / 1000)
    const asked = csr.spec?.expirationSeconds
    return typeof asked === 'number' && asked > 0 ? Math.min(asked, maxSeconds) : maxSeconds
  }

  async reconcile(name: string): Promise<ReconcileResult | void> {
    const csr = this.watched.informer.get(name)
    if (!csr || !needsSigning(csr)) return
    const problem = signerProblem(csr)
    const status = structuredClone(csr.status ?? {})
    if (problem) {
      const conditions = Array.isArray(status.conditions) ? status.conditions : []
      conditions.push({type: 'Failed', status: 'True', reason: 'SignerValidationFailure', message: problem})
      status.conditions = conditions
      this.logger.info('refused to sign', {csr: name, signer: csr.spec.signerName, reason: problem})
    } else {
      const certificate = await signCSR({
        ca: this.options.ca,
        csrPem: requestPem(csr),
        usages: csr.spec.usages,
        validitySeconds: this.validitySeconds(csr),
      })
      status.certificate = Buffer.from(certificate).toString('base64')
      this.logger.v(1, 'signed', {csr: name, signer: csr.spec.signerName})
    }
    try {
      await this.client.update({...CSR_LOCATOR, name, subresource: 'status'}, {...csr, status})
    } catch (error) {
      // a newer version (or a certificate someone else set) will come through the informer
      if (error instanceof ApiStatusError && (error.code === 409 || error.code === 404)) return
      throw error
    }
  }
}
