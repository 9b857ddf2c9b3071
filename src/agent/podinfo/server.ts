// The pod-info gRPC service (proto/podinfo/api.proto) on {root}/pods/agent.sock, mode 0600: ListPods,
// WatchPods (an update whenever a pod changes locally, also before the API has seen it), GetPod by UID
// (NOT_FOUND when unknown). Answers come from the agent's own cache, so they keep coming while the
// server is unreachable; until the agent's first sync every method is FAILED_PRECONDITION. A
// google.protobuf.FieldMask in the binary metadata entry `orch-field-mask-bin` limits the Pod fields
// returned (JSON paths such as `status.phase`); a mask that cannot be read, or a path that names no
// field of the Pod message, is INVALID_ARGUMENT (as google.protobuf.FieldMask asks of an API: "return
// an INVALID_ARGUMENT error if any path is unmappable").
import {chmodSync, mkdirSync, rmSync} from 'node:fs'
import {dirname} from 'node:path'
import {Server, ServerCredentials, status, type Metadata, type ServiceDefinition} from '@grpc/grpc-js'
import {pod as podDeclaration} from '../../api/core/pod.js'
import type {AnyObject, Field} from '../../api/types.js'
import {encodeMessage} from '../../machinery/protobuf.js'
import {LEN, Reader, Writer} from '../../machinery/protobuf-wire.js'

export const FIELD_MASK_METADATA = 'orch-field-mask-bin'

/** What the service reads: the agent's pods as it knows them. */
export interface PodSource {
  /** false until the agent's first sync after start */
  synced(): boolean
  pods(): AnyObject[]
  /** called with a pod whenever it changes locally; returns an unsubscribe function */
  subscribe(listener: (pod: AnyObject) => void): () => void
}

class MaskError extends Error {}

/** FieldMask bytes → paths. */
export function decodeFieldMask(bytes: Uint8Array): string[] {
  const paths: string[] = []
  try {
    const r = new Reader(bytes, 0, bytes.length)
    r.fields((number, wire) => {
      if (number === 1 && wire === LEN) paths.push(r.string())
      else r.skip(wire, number)
    })
  } catch (error) {
    throw new MaskError(`malformed field mask: ${(error as Error).message}`)
  }
  for (const path of paths) {
    if (!/^[A-Za-z][A-Za-z0-9]*(\.[A-Za-z][A-Za-z0-9]*)*$/.test(path)) throw new MaskError(`malformed field mask path ${JSON.stringify(path)}`)
    if (!mappable(path)) throw new MaskError(`invalid field mask path ${JSON.stringify(path)}: no such field in message Pod`)
  }
  return paths
}

/**
 * Whether a path names a field of the Pod message: each step a field of the message before it, and
 * every step but the last a singular message (a FieldMask does not reach into lists or maps).
 */
function mappable(path: string): boolean {
  let fields: Record<string, Field> | undefined = podDeclaration.schema.fields
  const keys = path.split('.')
  for (const [index, key] of keys.entries()) {
    const field: Field | undefined = fields && Object.hasOwn(fields, key) ? fields[key] : undefined
    if (!field) return false
    if (index === keys.length - 1) return true
    fields = field.type === 'object' ? field.fields : undefined
  }
  return false
}

export function encodeFieldMask(paths: string[]): Buffer {
  const w = new Writer(64)
  for (const path of paths) {
    w.tag(1, LEN)
    w.string(path)
  }
  return Buffer.from(w.finish())
}

/** Only the masked paths of a pod (no mask: all of it). */
export function applyFieldMask(pod: AnyObject, paths: string[] | undefined): AnyObject {
  if (!paths || paths.length === 0) return pod
  const out: AnyObject = {}
  for (const path of paths) {
    const keys = path.split('.')
    let from: unknown = pod
    for (const key of keys) from = from && typeof from === 'object' ? (from as AnyObject)[key] : undefined
    if (from === undefined) continue
    let to: AnyObject = out
    for (const key of keys.slice(0, -1)) to = (to[key] ??= {}) as AnyObject
    to[keys[keys.length - 1]] = structuredClone(from)
  }
  return out
}

function maskOf(metadata: Metadata): string[] | undefined {
  const values = metadata.get(FIELD_MASK_METADATA)
  if (values.length === 0) return undefined
  return values.flatMap((v) => decodeFieldMask(typeof v === 'string' ? Buffer.from(v, 'base64') : v))
}

/** A response message holding pods in field 1. */
function podsMessage(pods: AnyObject[]): Buffer {
  const w = new Writer(1024)
  for (const pod of pods) {
    const bytes = encodeMessage(podDeclaration, pod)
    w.tag(1, LEN)
    w.bytes(bytes)
  }
  return Buffer.from(w.finish())
}

function podUIDOf(bytes: Buffer): string {
  let uid = ''
  const r = new Reader(bytes, 0, bytes.length)
  r.fields((number, wire) => {
    if (number === 1 && wire === LEN) uid = r.string()
    else r.skip(wire, number)
  })
  return uid
}

const empty = (): Record<string, never> => ({})
const passBytes = (b: Buffer): Buffer => b

const definition: ServiceDefinition = {
  ListPods: {
    path: '/orch.agent.pods.v1alpha1.Pods/ListPods', requestStream: false, responseStream: false,
    requestSerialize: () => Buffer.alloc(0), requestDeserialize: empty, responseSerialize: passBytes, responseDeserialize: passBytes,
  },
  WatchPods: {
    path: '/orch.agent.pods.v1alpha1.Pods/WatchPods', requestStream: false, responseStream: true,
    requestSerialize: () => Buffer.alloc(0), requestDeserialize: empty, responseSerialize: passBytes, responseDeserialize: passBytes,
  },
  GetPod: {
    path: '/orch.agent.pods.v1alpha1.Pods/GetPod', requestStream: false, responseStream: false,
    requestSerialize: passBytes, requestDeserialize: (b: Buffer) => ({podUID: podUIDOf(b)}), responseSerialize: passBytes, responseDeserialize: passBytes,
  },
}

type Callback = (error: {code: number; details: string} | null, value?: Buffer) => void

export interface PodInfoServer {
  socketPath: string
  close(): Promise<void>
}

/** Serves the pod-info service on `socketPath` (created 0600). */
export async function startPodInfoServer(socketPath: string, source: PodSource): Promise<PodInfoServer> {
  mkdirSync(dirname(socketPath), {recursive: true, mode: 0o700})
  rmSync(socketPath, {force: true})
  const server = new Server()
  const precondition = {code: status.FAILED_PRECONDITION, details: 'the agent has not synced its pods since it started'}
  const guard = (call: {metadata: Metadata}): {error?: {code: number; details: string}; mask?: string[]} => {
    if (!source.synced()) return {error: precondition}
    try {
      return {mask: maskOf(call.metadata)}
    } catch (error) {
      return {error: {code: status.INVALID_ARGUMENT, details: (error as Error).message}}
    }
  }
  server.addService(definition, {
    ListPods: (call: {metadata: Metadata}, callback: Callback) => {
      const {error, mask} = guard(call)
      if (error) return callback(error)
      callback(null, podsMessage(source.pods().map((p) => applyFieldMask(p, mask))))
    },
    GetPod: (call: {metadata: Metadata; request: {podUID: string}}, callback: Callback) => {
      const {error, mask} = guard(call)
      if (error) return callback(error)
      const found = source.pods().find((p) => p.metadata?.uid === call.request.podUID)
      if (!found) return callback({code: status.NOT_FOUND, details: `pod with UID ${JSON.stringify(call.request.podUID)} not found`})
      callback(null, podsMessage([applyFieldMask(found, mask)]))
    },
    WatchPods: (call: {metadata: Metadata; write(b: Buffer): boolean; end(): void; destroy(e: Error): void; on(event: string, f: () => void): void; emit(event: string, e: unknown): void}) => {
      const {error, mask} = guard(call)
      if (error) {
        call.emit('error', error)
        return
      }
      const unsubscribe = source.subscribe((pod) => call.write(podsMessage([applyFieldMask(pod, mask)])))
      call.on('cancelled', unsubscribe)
      call.on('close', unsubscribe)
    },
  })
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix://${socketPath}`, ServerCredentials.createInsecure(), (error) => (error ? reject(error) : resolve())),
  )
  chmodSync(socketPath, 0o600)
  return {
    socketPath,
    close: () =>
      new Promise<void>((resolve) =>
        server.tryShutdown(() => {
          rmSync(socketPath, {force: true})
          resolve()
        }),
      ),
  }
}
