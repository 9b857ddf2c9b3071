// `orch pods --socket PATH`: the agent's local pod-info service (a UNIX socket, for the node's
// administrator): a table NAMESPACE NAME UID PHASE IP, or the Pod objects as JSON or YAML; --watch
// prints each change as it happens until interrupted; --uid one pod; --fields a field mask.
import {resolve} from 'node:path'
import {Client, credentials, Metadata, status as grpcStatus} from '@grpc/grpc-js'
import {encodeFieldMask, FIELD_MASK_METADATA} from '../agent/podinfo/server.js'
import {pod as podDeclaration} from '../api/core/pod.js'
import type {AnyObject} from '../api/types.js'
import {decodeMessage} from '../machinery/protobuf.js'
import {LEN, Reader, Writer} from '../machinery/protobuf-wire.js'
import {fail} from './fail.js'
import {dumpYaml} from '../machinery/go-yaml.js'

export const DEFAULT_POD_SOCKET = '/var/lib/agent/pods/agent.sock'
const SERVICE = '/orch.agent.pods.v1alpha1.Pods'

export interface PodsOptions {
  socket: string
  watch: boolean
  uid?: string
  fields?: string[]
  output: 'table' | 'json' | 'yaml'
}

function podsOf(bytes: Buffer): AnyObject[] {
  const out: AnyObject[] = []
  const r = new Reader(bytes, 0, bytes.length)
  r.fields((number, wire) => {
    if (number === 1 && wire === LEN) out.push(decodeMessage(podDeclaration, r.bytes()))
    else r.skip(wire, number)
  })
  return out
}

function uidRequest(uid: string): Buffer {
  const w = new Writer(64)
  w.tag(1, LEN)
  w.string(uid)
  return Buffer.from(w.finish())
}

function row(pod: AnyObject): string[] {
  return [pod.metadata?.namespace ?? '', pod.metadata?.name ?? '', pod.metadata?.uid ?? '', pod.status?.phase ?? '', pod.status?.podIP ?? '']
}

function printTable(rows: string[][], header: boolean): void {
  const all = header ? [['NAMESPACE', 'NAME', 'UID', 'PHASE', 'IP'], ...rows] : rows
  const widths = [0, 1, 2, 3].map((c) => Math.max(6, ...all.map((r) => r[c].length)) + 3)
  for (const r of all) process.stdout.write(r.map((cell, c) => (c < 4 ? cell.padEnd(widths[c]) : cell)).join('').trimEnd() + '\n')
}

function print(pods: AnyObject[], options: PodsOptions, header = true): void {
  if (options.output === 'json') for (const p of pods) process.stdout.write(JSON.stringify(p) + '\n')
  else if (options.output === 'yaml') for (const p of pods) process.stdout.write('---\n' + dumpYaml(p))
  else printTable(pods.map(row), header)
}

function describeError(error: {code?: number; details?: string; message: string}): string {
  if (error.code === grpcStatus.UNAVAILABLE) return `cannot reach the agent's pod-info socket: ${error.details ?? error.message}`
  return error.details ?? error.message
}

export async function runPods(options: PodsOptions): Promise<void> {
  // `unix:` and an absolute path: `unix://` + a relative path would read its first step as an authority
  const client = new Client(`unix:${resolve(options.socket)}`, credentials.createInsecure())
  const metadata = new Metadata()
  if (options.fields && options.fields.length > 0) metadata.set(FIELD_MASK_METADATA, encodeFieldMask(options.fields))
  const pass = (b: Buffer) => b
  try {
    if (options.watch) {
      // as `kubectl get -w`: the current pods first, then each change (the stream opens first so
      // that nothing between the list and the watch is lost)
      const stream = client.makeServerStreamRequest(`${SERVICE}/WatchPods`, () => Buffer.alloc(0), pass, Buffer.alloc(0), metadata)
      const early: Buffer[] = []
      let listed = false
      const show = (bytes: Buffer): void => {
        const pods = podsOf(bytes).filter((pod) => !options.uid || pod.metadata?.uid === options.uid)
        if (pods.length > 0) print(pods, options, false)
      }
      stream.on('data', (bytes: Buffer) => (listed ? show(bytes) : early.push(bytes)))
      const current = await new Promise<Buffer>((resolve, reject) =>
        client.makeUnaryRequest(`${SERVICE}/ListPods`, pass, pass, Buffer.alloc(0), metadata, (error, value) => (error ? reject(error) : resolve(value!))),
      )
      const initial = podsOf(current).filter((pod) => !options.uid || pod.metadata?.uid === options.uid)
      print(initial, options, true)
      listed = true
      for (const bytes of early.splice(0)) show(bytes)
      await new Promise<void>((resolve, reject) => {
        stream.on('error', reject)
        stream.on('end', resolve)
        process.once('SIGINT', () => {
          stream.cancel()
          resolve()
        })
      })
      return
    }
    const method = options.uid ? 'GetPod' : 'ListPods'
    const request = options.uid ? uidRequest(options.uid) : Buffer.alloc(0)
    const bytes = await new Promise<Buffer>((resolve, reject) =>
      client.makeUnaryRequest(`${SERVICE}/${method}`, pass, pass, request, metadata, (error, value) => (error ? reject(error) : resolve(value!))),
    )
    print(podsOf(bytes), options)
  } catch (error) {
    fail(describeError(error as {code?: number; details?: string; message: string}))
  } finally {
    client.close()
  }
}
