// configMap volumes as the kubelet's configmap volume plugin and atomic writer lay them out:
// {root}/pods/<uid>/volumes/configmap/<volume> (mode 0777 like the emptyDir the plugin wraps) holds
//   ..<UTC time>.<random>/   the files of one version (0755), each with its mode (defaultMode or the item's)
//   ..data -> ..<time>...     swapped atomically (a new symlink renamed over the old) on every change
//   <key> -> ..data/<key>     one symlink per top-level name, so readers see a whole version or the other
// The payload is MakePayload's: every key of data and binaryData (no items), or the items' keys at
// their paths; a missing key of an items list fails unless the volume is optional.
import {chmodSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync} from 'node:fs'
import {dirname, join, normalize} from 'node:path'
import type {AnyObject} from '../../api/types.js'
import {mkdirWithMode, podDirectory} from './pod-dirs.js'

/** Where a pod's ConfigMaps come from: the API (the agent's client), or nothing in standalone mode. */
export interface ConfigMapSource {
  /** the ConfigMap, or undefined when it does not exist; throws for any other failure */
  get(namespace: string, name: string): Promise<AnyObject | undefined>
}

/** the configMap volume's defaultMode when the pod gives none (the API's default, 0644) */
export const CONFIGMAP_DEFAULT_MODE = 0o644
/** the volume directory's mode: the kubelet's configMap volume wraps an emptyDir (0777) */
const VOLUME_DIR_MODE = 0o777
const DATA_DIR = '..data'
const DATA_DIR_TMP = '..data_tmp'

export interface FileProjection {
  data: Buffer
  mode: number
}

/** The kubelet's message for a ConfigMap it cannot get: NotFound of group resource "configmap". */
export const configMapNotFound = (name: string): string => `configmap "${name}" not found`

/** The directory of configMap volume `volume` of pod `uid`. */
export function configMapVolumeDirectory(rootDir: string, uid: string, volume: string): string {
  return join(podDirectory(rootDir, uid), 'volumes', 'configmap', volume)
}

/** The kubelet's MakePayload: file path → content and mode, or an error message. */
export function makePayload(source: AnyObject, configMap: AnyObject | undefined, optional: boolean): Map<string, FileProjection> {
  const defaultMode = source.defaultMode ?? CONFIGMAP_DEFAULT_MODE
  const data: Record<string, string> = configMap?.data ?? {}
  const binary: Record<string, string> = configMap?.binaryData ?? {}
  const valueOf = (key: string): Buffer | undefined =>
    Object.hasOwn(data, key) ? Buffer.from(String(data[key])) : Object.hasOwn(binary, key) ? Buffer.from(String(binary[key]), 'base64') : undefined
  const payload = new Map<string, FileProjection>()
  const items: AnyObject[] = source.items ?? []
  if (items.length === 0) {
    for (const key of [...Object.keys(data), ...Object.keys(binary)]) payload.set(key, {data: valueOf(key)!, mode: defaultMode})
    return payload
  }
  for (const item of items) {
    const value = valueOf(item.key)
    if (value === undefined) {
      if (optional) continue
      throw new Error(`configmap references non-existent config key: ${item.key}`)
    }
    payload.set(item.path, {data: value, mode: item.mode ?? defaultMode})
  }
  return payload
}

/** A payload path the atomic writer accepts: relative, no `..` element, not starting with `..`. */
function validPath(path: string): boolean {
  if (path === '' || path.startsWith('/') || path.startsWith('..')) return false
  return !path.split('/').includes('..') && normalize(path) === path.replace(/\/+$/, '')
}

/** The current version's files (path → content and mode), or undefined when there is none. */
function currentPayload(target: string): Map<string, FileProjection> | undefined {
  let dataDir: string
  try {
    dataDir = join(target, readlinkSync(join(target, DATA_DIR)))
  } catch {
    return undefined
  }
  const files = new Map<string, FileProjection>()
  const walk = (dir: string, prefix: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name)
      const stat = lstatSync(path)
      if (stat.isDirectory()) walk(path, `${prefix}${name}/`)
      else files.set(`${prefix}${name}`, {data: readFileSync(path), mode: stat.mode & 0o7777})
    }
  }
  walk(dataDir, '')
  return files
}

function samePayload(a: Map<string, FileProjection>, b: Map<string, FileProjection> | undefined): boolean {
  if (!b || a.size !== b.size) return false
  for (const [path, file] of a) {
    const other = b.get(path)
    if (!other || other.mode !== (file.mode & 0o7777) || !other.data.equals(file.data)) return false
  }
  return true
}

const topLevel = (path: string): string => path.split('/')[0]!

/**
 * The kubelet's AtomicWriter.Write: writes payload into a new timestamped directory, points ..data at
 * it (rename of a new symlink: atomic), links each top-level name through ..data, then removes the old
 * version and the names that are gone. Nothing is written when the files are already those. Returns
 * true when a new version was written.
 */
export function writeAtomically(target: string, payload: Map<string, FileProjection>, now = new Date()): boolean {
  for (const path of payload.keys()) if (!validPath(path)) throw new Error(`invalid path ${JSON.stringify(path)}: must be relative and may not contain '..'`)
  mkdirWithMode(target, VOLUME_DIR_MODE)
  const current = currentPayload(target)
  if (samePayload(payload, current)) return false
  let oldDir: string | undefined
  try {
    oldDir = readlinkSync(join(target, DATA_DIR))
  } catch {
    oldDir = undefined
  }
  const stamp = now.toISOString().replace(/\.\d+Z$/, '').replace(/[-T:]/g, '_')
  const versionDir = mkdtempSync(join(target, `..${stamp}.`))
  chmodSync(versionDir, 0o755)
  for (const [path, file] of payload) {
    const full = join(versionDir, path)
    mkdirSync(dirname(full), {recursive: true})
    writeFileSync(full, file.data, {mode: file.mode & 0o7777})
    chmodSync(full, file.mode & 0o7777)
  }
  const tmpLink = join(target, DATA_DIR_TMP)
  rmSync(tmpLink, {force: true})
  symlinkSync(versionDir.slice(target.length + 1), tmpLink)
  renameSync(tmpLink, join(target, DATA_DIR))
  const wanted = new Set([...payload.keys()].map(topLevel))
  for (const name of wanted) {
    const link = join(target, name)
    try {
      if (readlinkSync(link) === join(DATA_DIR, name)) continue
      unlinkSync(link)
    } catch {
      // missing: created below
    }
    symlinkSync(join(DATA_DIR, name), link)
  }
  for (const name of readdirSync(target)) {
    if (name.startsWith('..') || wanted.has(name)) continue
    rmSync(join(target, name), {recursive: true, force: true})
  }
  if (oldDir && oldDir !== DATA_DIR) rmSync(join(target, oldDir), {recursive: true, force: true})
  return true
}

/** The configMap volumes of a pod. */
export const configMapVolumes = (pod: AnyObject): AnyObject[] => (pod.spec?.volumes ?? []).filter((v: AnyObject) => v.configMap)

/**
 * Sets up (or brings up to date) configMap volume `volume` of pod: fetches the ConfigMap, builds the
 * payload and writes it atomically. Throws with the kubelet's message (a missing ConfigMap that is not
 * optional: `configmap "x" not found`; a missing item key; standalone mode). Returns the directory and
 * whether a new version of the files was written.
 */
export async function setUpConfigMapVolume(rootDir: string, pod: AnyObject, volume: AnyObject, source: ConfigMapSource | undefined): Promise<{path: string; written: boolean}> {
  const spec = volume.configMap as AnyObject
  const optional = spec.optional === true
  if (!source) throw new Error('not supported due to running the agent in standalone mode')
  const configMap = await source.get(pod.metadata!.namespace, spec.name)
  if (!configMap && !optional) throw new Error(configMapNotFound(spec.name))
  const target = configMapVolumeDirectory(rootDir, pod.metadata!.uid, volume.name)
  const written = writeAtomically(target, makePayload(spec, configMap, optional))
  return {path: target, written}
}
