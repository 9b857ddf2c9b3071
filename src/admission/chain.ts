// The admission chain: mutating plugins in order (each sees the previous one's result), then
// validating plugins in order. Kubernetes runs the built-in plugins first, then the mutating
// admission policies and webhooks, then the validating ones; orch registers them in that order.
import type {AnyObject} from '../api/types.js'
import type {AdmissionAttributes, MutatingPlugin, ValidatingPlugin} from './types.js'

export class AdmissionChain {
  private readonly mutating: MutatingPlugin[] = []
  private readonly validating: ValidatingPlugin[] = []

  addMutating(plugin: MutatingPlugin): this {
    this.mutating.push(plugin)
    return this
  }

  addValidating(plugin: ValidatingPlugin): this {
    this.validating.push(plugin)
    return this
  }

  get mutates(): boolean {
    return this.mutating.length > 0
  }

  get empty(): boolean {
    return this.mutating.length === 0 && this.validating.length === 0
  }

  /** Runs the mutating plugins; returns the object to validate and store. */
  async admit(attributes: AdmissionAttributes): Promise<AnyObject | null> {
    for (const plugin of this.mutating) {
      const replaced = await plugin.admit(attributes)
      if (replaced) attributes.object = replaced
    }
    return attributes.object
  }

  async validate(attributes: AdmissionAttributes): Promise<void> {
    for (const plugin of this.validating) {
      if (plugin.handles && !plugin.handles(attributes)) continue
      await plugin.validate(attributes)
    }
  }
}
