// The node's heartbeat Lease (`coordination.orch.io/v1`, namespace orch-node-lease, name = node),
// as the kubelet's node lease controller keeps it: renewed every renewInterval (default 10 s),
// created when missing (owned by the Node so it goes with it); on failure retried with exponential
// backoff from 200 ms up to 7 s, then the normal interval resumes.
import {NODE_LEASE_NAMESPACE} from '../api/coordination/lease.js'
import type {AnyObject} from '../api/types.js'
import {isApiStatusError, type RestClient} from '../client/index.js'
import type {Logger} from '../machinery/log.js'
import {formatMicroTime} from '../machinery/managed-fields.js'

export const DEFAULT_LEASE_RENEW_MS = 10_000
export const LEASE_BACKOFF_INITIAL_MS = 200
export const LEASE_BACKOFF_MAX_MS = 7_000

const LEASES = {group: 'coordination.orch.io', version: 'v1', resource: 'leases', namespace: NODE_LEASE_NAMESPACE}


export interface LeaseRenewerOptions {
  client: () => RestClient
  nodeName: string
  leaseDurationSeconds: number
  renewIntervalMs?: number
  logger: Logger
  /** the Node's uid for the owner reference, once known */
  nodeUID?: () => string | undefined
}

export class LeaseRenewer {
  private timer: NodeJS.Timeout | undefined
  private stopped = false
  private failures = 0
  private lease: AnyObject | undefined

  constructor(private readonly options: LeaseRenewerOptions) {}

  start(): void {
    void this.tick()
  }

  stop(): void {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
  }

  /** The delay before the next attempt after `failures` consecutive failures. */
  static backoffMs(failures: number): number {
    return Math.min(LEASE_BACKOFF_INITIAL_MS * 2 ** Math.max(0, failures - 1), LEASE_BACKOFF_MAX_MS)
  }

  private schedule(ms: number): void {
    if (this.stopped) return
    this.timer = setTimeout(() => void this.tick(), ms)
    this.timer.unref()
  }

  private async tick(): Promise<void> {
    try {
      this.lease = await this.renew()
      this.failures = 0
      this.schedule(this.options.renewIntervalMs ?? DEFAULT_LEASE_RENEW_MS)
    } catch (error) {
      this.failures++
      this.lease = undefined
      const delay = LeaseRenewer.backoffMs(this.failures)
      this.options.logger.warn('could not renew the node lease', {error: (error as Error).message, retryInMs: delay})
      this.schedule(delay)
    }
  }

  private desired(base: AnyObject | undefined): AnyObject {
    const nodeUID = this.options.nodeUID?.()
    const metadata: AnyObject = {...(base?.metadata ?? {}), name: this.options.nodeName, namespace: NODE_LEASE_NAMESPACE}
    if (nodeUID && !metadata.ownerReferences?.length) {
      metadata.ownerReferences = [{apiVersion: 'v1', kind: 'Node', name: this.options.nodeName, uid: nodeUID}]
    }
    return {
      apiVersion: 'coordination.orch.io/v1',
      kind: 'Lease',
      metadata,
      spec: {
        ...(base?.spec ?? {}),
        holderIdentity: this.options.nodeName,
        leaseDurationSeconds: this.options.leaseDurationSeconds,
        renewTime: formatMicroTime(new Date()),
      },
    }
  }

  private async renew(): Promise<AnyObject> {
    const client = this.options.client()
    if (this.lease) {
      try {
        return await client.update({...LEASES, name: this.options.nodeName}, this.desired(this.lease))
      } catch (error) {
        if (!isApiStatusError(error) || (error.status.code !== 409 && error.status.code !== 404)) throw error
      }
    }
    let current: AnyObject | undefined
    try {
      current = await client.get({...LEASES, name: this.options.nodeName})
    } catch (error) {
      if (!isApiStatusError(error) || error.status.code !== 404) throw error
    }
    if (current) return client.update({...LEASES, name: this.options.nodeName}, this.desired(current))
    return client.create(LEASES, this.desired(undefined))
  }
}
