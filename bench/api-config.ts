// Flags and settings of the API benchmark (bench/api.ts).
import {resolve} from 'node:path'

// ---------------------------------------------------------------------------------------------
// configuration

export const argv = process.argv.slice(2)
export function flag(name: string): string | undefined {
  const prefix = `--${name}=`
  const index = argv.findIndex((a) => a === `--${name}` || a.startsWith(prefix))
  if (index < 0) return undefined
  const arg = argv[index]
  if (arg.startsWith(prefix)) return arg.slice(prefix.length)
  const next = argv[index + 1]
  return next !== undefined && !next.startsWith('--') ? next : ''
}

export const QUICK = flag('quick') !== undefined
export const ONLY = new Set((flag('only') ?? 'p1,p4,p2,p3').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean))
export const PROFILE_DIR = flag('profile-server') ? resolve(flag('profile-server')!) : undefined

export const CONFIG = QUICK
  ? {
      createCount: 1_000,
      createWarmup: 200,
      createTrials: 1,
      handshakes: 300,
      listItems: 1_000,
      listRuns: 5,
      gzipRuns: 2,
      watchers: 50,
      writesPerSecond: 50,
      writeSeconds: 5,
      warmupSeconds: 0.5,
      watchdogMs: 90_000,
      budgetMs: 25_000,
    }
  : {
      createCount: 10_000,
      createWarmup: 1_000,
      createTrials: 3,
      handshakes: 2_000,
      listItems: 10_000,
      listRuns: 15,
      gzipRuns: 5,
      watchers: 1_000,
      writesPerSecond: 200,
      writeSeconds: 30,
      warmupSeconds: 1,
      watchdogMs: 290_000,
      /** fallback P3 attempts start only if they can end within this */
      budgetMs: 235_000,
    }
if (flag('watchers')) CONFIG.watchers = Number(flag('watchers'))

export const CONCURRENCY = 16
/** ConfigMaps the P3 writer updates round-robin (unconditional PUT, so conflicts are rare) */
export const WATCH_OBJECTS = 64
/** P3 gives up on a watcher count when delivery lags this far behind the acknowledged writes */
export const MAX_LAG_SECONDS = 10
/** ... or when this many seconds' worth of writes wait for their response: the server cannot
 *  sustain the write rate with that many watchers */
export const SATURATION_SECONDS = 5
/** after the last write, how long delivery may take before the attempt counts as failed */
export const DRAIN_MS = 10_000
export const BODY_BYTES = 1024


// ---------------------------------------------------------------------------------------------
// output (tables and medians: bench/report.ts)

export function note(text: string): void {
  console.log(`  ${text}`)
}

