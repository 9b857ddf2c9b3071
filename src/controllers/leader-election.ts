// Leader election for the controllers, as kube-controller-manager does it (client-go's leaderelection
// with a Lease lock): servers sharing one store (several `orch server` on one etcd) each try to hold the
// Lease `orch-system/orch-controller-manager`; only its holder runs the controllers. The holder renews
// it every retry period; a Lease not renewed for its duration may be taken over by another candidate
// (leaseTransitions counts the changes of holder). A holder that cannot renew within the renew deadline
// stops leading. On a clean stop the holder releases the Lease (holderIdentity emptied), so another
// server takes over at once.
import {ApiStatusError, type RestClient} from '../client/index.js'
import {formatMicroTime} from '../machinery/managed-fields.js'
import type {Logger} from '../machinery/log.js'

export interface LeaderElectionConfig {
  /** who this candidate is (kube-controller-manager: hostname_uuid) */
  identity: string
  namespace?: string
  name?: string
  /** --leader-elect-lease-duration (default 15 s) */
  leaseDurationMs?: number
  /** --leader-elect-renew-deadline (default 10 s) */
  renewDeadlineMs?: number
  /** --leader-elect-retry-period (default 2 s) */
  retryPeriodMs?: number
}

export const CONTROLLER_MANAGER_LEASE = {namespace: 'orch-system', name: 'orch-controller-manager'}

interface Lease {
  metadata: {name: string; namespace: string; resourceVersion?: string}
  spec?: {holderIdentity?: string; leaseDurationSeconds?: number; acquireTime?: string; renewTime?: string; leaseTransitions?: number}
}

export class LeaderElector {
  private readonly locator
  private readonly leaseDurationMs: number
  private readonly renewDeadlineMs: number
  private readonly retryPeriodMs: number
  /** the Lease as last read or written, and when this candidate saw its holder or renewTime change */
  private observed: {lease: Lease | undefined; at: number} = {lease: undefined, at: 0}
  private leading = false
  private stopped = false
  private timer: NodeJS.Timeout | undefined
  private wake: (() => void) | undefined
  /** the election's loop, awaited by stop() */
  private done: Promise<void> | undefined
  /** the led work failed to start: this term ends and the Lease is given up */
  private failedStart = false

  constructor(
    private readonly client: RestClient,
    private readonly config: LeaderElectionConfig,
    private readonly logger: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.locator = {
      group: 'coordination.orch.io',
      version: 'v1',
      resource: 'leases',
      namespace: config.namespace ?? CONTROLLER_MANAGER_LEASE.namespace,
      name: config.name ?? CONTROLLER_MANAGER_LEASE.name,
    }
    this.leaseDurationMs = config.leaseDurationMs ?? 15_000
    this.renewDeadlineMs = config.renewDeadlineMs ?? 10_000
    this.retryPeriodMs = config.retryPeriodMs ?? 2_000
  }

  get isLeader(): boolean {
    return this.leading
  }

  /**
   * Runs the election until stop(): `lead` is called on becoming leader and must resolve to how the
   * led work stops, which is called when leadership is lost (then the candidate tries again). The
   * Lease is renewed while the work starts, as client-go runs OnStartedLeading beside its renew loop.
   * A start that fails gives the Lease up (released) and the candidate tries again later.
   * Resolves after the first attempt to acquire — once the led work has started, when it won.
   */
  async run(lead: () => Promise<() => Promise<void>>): Promise<void> {
    if (!(await this.tryAcquireOrRenew())) {
      this.done = this.loop(lead)
      return
    }
    const started = this.lead(lead)
    this.done = this.loop(lead, started)
    await started
  }

  /** A term of leadership: the work starting beside the renewals; resolves to how it stops (none when it failed). */
  private lead(lead: () => Promise<() => Promise<void>>): Promise<(() => Promise<void>) | undefined> {
    this.leading = true
    this.logger.info('became leader', {lease: `${this.locator.namespace}/${this.locator.name}`, identity: this.config.identity})
    return lead().catch((error: Error) => {
      this.logger.error('the elected work failed to start: giving up leadership', {error: error.message})
      this.failedStart = true
      return undefined
    })
  }

  private async loop(lead: () => Promise<() => Promise<void>>, first?: Promise<(() => Promise<void>) | undefined>): Promise<void> {
    let started = first
    while (!this.stopped) {
      if (!started) {
        let acquired = false
        while (!acquired && !this.stopped) {
          await this.pause(this.jittered(this.retryPeriodMs))
          acquired = !this.stopped && (await this.tryAcquireOrRenew())
        }
        if (this.stopped) break
        started = this.lead(lead)
      }
      await this.renewWhileLeading()
      this.leading = false
      const stopLed = await started
      await stopLed?.()
      started = undefined
      if (this.failedStart) {
        this.failedStart = false
        await this.release()
        await this.pause(this.leaseDurationMs)
      } else if (!this.stopped) {
        this.logger.error('leader election lost', {lease: `${this.locator.namespace}/${this.locator.name}`, identity: this.config.identity})
      }
    }
  }

  /** Ends the election; a leader stops its work first, then releases the Lease. */
  async stop(): Promise<void> {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    this.wake?.()
    await this.done
    await this.release()
  }

  /** client-go's renew loop: a renewal every retry period, each attempt bounded by what is left of the
   *  renew deadline; none for the renew deadline (or a start that failed) ends leading. */
  private async renewWhileLeading(): Promise<void> {
    let lastRenewed = Date.now()
    while (!this.stopped && !this.failedStart) {
      await this.pause(this.retryPeriodMs)
      if (this.stopped || this.failedStart) return
      const left = this.renewDeadlineMs - (Date.now() - lastRenewed)
      if (left > 0 && (await this.withinMs(this.tryAcquireOrRenew(), left))) lastRenewed = Date.now()
      else if (Date.now() - lastRenewed >= this.renewDeadlineMs || this.heldByAnother()) return
    }
  }

  /** the attempt's answer, or false once `ms` have passed (the attempt is then left to finish alone) */
  private withinMs(attempt: Promise<boolean>, ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)))
    return Promise.race([attempt, late]).finally(() => clearTimeout(timer))
  }

  private heldByAnother(): boolean {
    const holder = this.observed.lease?.spec?.holderIdentity
    return holder !== undefined && holder !== '' && holder !== this.config.identity
  }

  /** tryAcquireOrRenew: create the Lease, renew our own, or take over an expired or released one. */
  async tryAcquireOrRenew(): Promise<boolean> {
    const now = this.now()
    const nowText = formatMicroTime(now)
    const durationSeconds = Math.round(this.leaseDurationMs / 1000)
    let current: Lease
    try {
      current = await this.client.get<Lease>(this.locator)
    } catch (error) {
      if (!(error instanceof ApiStatusError && error.code === 404)) return this.failed('error retrieving resource lock', error)
      try {
        const created = await this.client.create<Lease>(
          {...this.locator, name: undefined},
          {
            apiVersion: 'coordination.orch.io/v1',
            kind: 'Lease',
            metadata: {name: this.locator.name, namespace: this.locator.namespace},
            spec: {holderIdentity: this.config.identity, leaseDurationSeconds: durationSeconds, acquireTime: nowText, renewTime: nowText, leaseTransitions: 0},
          },
        )
        this.observe(created)
        return true
      } catch (createError) {
        return this.failed('error initially creating leader election record', createError)
      }
    }
    this.observe(current)
    const spec = current.spec ?? {}
    const holder = spec.holderIdentity ?? ''
    const ours = holder === this.config.identity
    // another holder's Lease is theirs until it has gone unrenewed for its duration, as this candidate
    // observed it (clocks of different servers are not compared)
    const expiresAt = this.observed.at + (spec.leaseDurationSeconds ?? durationSeconds) * 1000
    if (holder !== '' && !ours && Date.now() < expiresAt) return false
    const next: Lease = {
      ...current,
      spec: {
        holderIdentity: this.config.identity,
        leaseDurationSeconds: durationSeconds,
        acquireTime: ours ? (spec.acquireTime ?? nowText) : nowText,
        renewTime: nowText,
        leaseTransitions: ours ? (spec.leaseTransitions ?? 0) : (spec.leaseTransitions ?? 0) + 1,
      },
    }
    try {
      this.observe(await this.client.update<Lease>(this.locator, next))
      return true
    } catch (error) {
      return this.failed('Failed to update lock', error)
    }
  }

  /** the Lease as seen now; the observed time moves only when its holder or renewTime changed */
  private observe(lease: Lease): void {
    const before = this.observed.lease?.spec
    const changed = !before || before.holderIdentity !== lease.spec?.holderIdentity || before.renewTime !== lease.spec?.renewTime
    this.observed = {lease, at: changed ? Date.now() : this.observed.at}
  }

  private failed(what: string, error: unknown): false {
    // a lost compare-and-swap is the usual outcome of a contested round: not worth a warning
    if (error instanceof ApiStatusError && error.code === 409) this.logger.v(4, what, {error: error.message})
    else this.logger.warn(what, {error: (error as Error).message})
    return false
  }

  /** ReleaseOnCancel: the holder empties holderIdentity so that another candidate need not wait. */
  private async release(): Promise<void> {
    const lease = this.observed.lease
    if (!lease || lease.spec?.holderIdentity !== this.config.identity) return
    const nowText = formatMicroTime(this.now())
    try {
      await this.client.update(this.locator, {...lease, spec: {...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: nowText, acquireTime: nowText}})
      this.logger.v(2, 'leader election lease released', {identity: this.config.identity})
    } catch (error) {
      this.logger.warn('could not release the leader election lease', {error: (error as Error).message})
    }
  }

  private jittered(ms: number): number {
    return ms * (1 + Math.random() * 1.2)
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve
      this.timer = setTimeout(resolve, ms)
    })
  }
}
