// The pods' directories under {root}/pods, as the kubelet keeps them: {uid}/volumes/... (emptyDir
// volumes, created mode 0777 whatever the umask, so that any user in the container may write) and the
// log directory {namespace}_{name}_{uid}. Both go once the pod is deleted and its containers are
// removed, and a housekeeping pass (the kubelet's cleanupOrphanedPodDirs) removes those of pods that no
// source has and the runtime does not run, e.g. deleted while the agent was down.
import {chmodSync, mkdirSync, readdirSync, rmSync, statSync} from 'node:fs'
import {join} from 'node:path'
import type {AnyObject} from '../../api/types.js'

/** the kubelet's emptyDir permission: 0777, set with chmod after mkdir so that the umask does not narrow it */
export const EMPTY_DIR_MODE = 0o777

export function podDirectory(rootDir: string, uid: string): string {
  return join(rootDir, 'pods', uid)
}

export function podLogDirectory(rootDir: string, pod: AnyObject): string {
  return join(rootDir, 'pods', `${pod.metadata!.namespace}_${pod.metadata!.name}_${pod.metadata!.uid}`)
}

/** Creates the directory (and its parents) when missing, with exactly `mode` whatever the umask. */
export function mkdirWithMode(path: string, mode: number): void {
  mkdirSync(path, {recursive: true, mode})
  if ((statSync(path).mode & 0o777) !== mode) chmodSync(path, mode)
}

/** Creates (when missing) the emptyDir volume `name` of pod `uid` and returns its path. */
export function ensureEmptyDir(rootDir: string, uid: string, name: string): string {
  const path = join(podDirectory(rootDir, uid), 'volumes', 'empty-dir', name)
  mkdirWithMode(path, EMPTY_DIR_MODE)
  return path
}

/** The pod uid a directory under {root}/pods belongs to: `{uid}` or `{namespace}_{name}_{uid}`; undefined for anything else. */
function uidOfDirectory(name: string): string | undefined {
  const parts = name.split('_')
  if (parts.length === 1 || parts.length === 3) return parts[parts.length - 1] || undefined
  return undefined
}

/** Removes the pod's directories (volumes and logs). */
export function removePodDirectories(rootDir: string, pod: AnyObject): void {
  rmSync(podDirectory(rootDir, pod.metadata!.uid), {recursive: true, force: true})
  rmSync(podLogDirectory(rootDir, pod), {recursive: true, force: true})
}

/** Removes the directories under {root}/pods of pods for which inUse(uid) is false; returns the names removed. */
export function removeOrphanedPodDirectories(rootDir: string, inUse: (uid: string) => boolean): string[] {
  const base = join(rootDir, 'pods')
  let names: string[]
  try {
    names = readdirSync(base)
  } catch {
    return []
  }
  const removed: string[] = []
  for (const name of names) {
    const uid = uidOfDirectory(name)
    if (!uid || inUse(uid)) continue
    try {
      if (!statSync(join(base, name)).isDirectory()) continue
      rmSync(join(base, name), {recursive: true, force: true})
      removed.push(name)
    } catch {
      // gone already, or not ours to remove: the next pass sees it again
    }
  }
  return removed
}
