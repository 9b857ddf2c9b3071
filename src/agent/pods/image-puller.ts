// The kubelet's image pullers, shared by every pod worker of the agent: with serializeImagePulls
// (the default) one pull runs at a time and the others wait in a queue, in the order they were asked
// for; without it pulls run in parallel, at most `maxParallel` at once (unbounded when not given).

export class ImagePuller {
  private running = 0
  private readonly waiting: (() => void)[] = []
  /** how many pulls may run at once */
  readonly limit: number

  constructor(options: {serialize: boolean; maxParallel?: number}) {
    this.limit = options.serialize ? 1 : options.maxParallel !== undefined && options.maxParallel > 0 ? options.maxParallel : Number.POSITIVE_INFINITY
  }

  /** pulls in progress and pulls waiting for their turn */
  get load(): {running: number; waiting: number} {
    return {running: this.running, waiting: this.waiting.length}
  }

  /** Runs `pull` when its turn comes; resolves or rejects with it. */
  async pull<T>(pull: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve))
    else this.running++
    try {
      return await pull()
    } finally {
      // hand the slot straight to the next in line (running stays the same), else free it
      const next = this.waiting.shift()
      if (next) next()
      else this.running--
    }
  }
}
