// Mount points, for test clean-up that must never remove files through a mount.
import {readFileSync} from 'node:fs'

/** Mount points at or below dir, deepest first (Linux: /proc/self/mountinfo; elsewhere none are known). */
export function mountsUnder(dir: string): string[] {
  let mountinfo: string
  try {
    mountinfo = readFileSync('/proc/self/mountinfo', 'utf8')
  } catch {
    return []
  }
  return mountinfo
    .split('\n')
    .map((line) => (line.split(' ')[4] ?? '').replace(/\\040/g, ' '))
    .filter((point) => point === dir || point.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length)
}
