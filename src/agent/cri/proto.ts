// Loads proto/cri/api.proto (the CRI subset, package runtime.v1) at run time, for the client and for
// orch's own process runtime. The file ships in the package's `proto/` directory; it is found by
// walking up from this compiled file (dist/src/agent/cri/ in a build, src/agent/cri/ otherwise).
import {existsSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import * as grpc from '@grpc/grpc-js'
import * as protoLoader from '@grpc/proto-loader'

/**
 * The decoding rules both ends use (documented in types.ts): camelCase field names, enums as names,
 * int64 as decimal strings, bytes as Buffers, zero values and empty lists/maps filled in.
 */
export const CRI_LOADER_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: String,
  enums: String,
  bytes: Buffer,
  defaults: true,
  arrays: true,
  objects: true,
  oneofs: true,
}

/** The relative location of the CRI definition inside the package. */
const PROTO_RELATIVE = join('proto', 'cri', 'api.proto')

/** Absolute path of proto/cri/api.proto, searched upwards from this module's directory. */
export function criProtoPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (true) {
    const candidate = join(dir, PROTO_RELATIVE)
    if (existsSync(candidate)) return candidate
    const parent = dirname(dir)
    if (parent === dir) throw new Error(`cannot find ${PROTO_RELATIVE} above ${dirname(fileURLToPath(import.meta.url))}`)
    dir = parent
  }
}

export interface CriServices {
  RuntimeService: grpc.ServiceClientConstructor
  ImageService: grpc.ServiceClientConstructor
}

let cached: CriServices | undefined

/** The two CRI services as grpc-js client constructors (their `.service` is the server definition). */
export function criServices(): CriServices {
  if (cached) return cached
  const definition = protoLoader.loadSync(criProtoPath(), CRI_LOADER_OPTIONS)
  const root = grpc.loadPackageDefinition(definition) as any
  const v1 = root.runtime.v1
  cached = {RuntimeService: v1.RuntimeService, ImageService: v1.ImageService}
  return cached
}

/**
 * The UNIX socket path of a CRI endpoint: `unix:///run/x.sock` or a bare absolute path. Other
 * schemes are refused: CRI endpoints on Linux are UNIX sockets.
 */
export function socketPathOf(endpoint: string): string {
  if (endpoint.startsWith('unix://')) {
    const path = endpoint.slice('unix://'.length)
    if (path.startsWith('/')) return path
    throw new Error(`CRI endpoint ${JSON.stringify(endpoint)}: the socket path must be absolute (unix:///path)`)
  }
  if (endpoint.startsWith('/')) return endpoint
  throw new Error(`CRI endpoint ${JSON.stringify(endpoint)} is not a UNIX socket (expected unix:///path)`)
}

/** The grpc-js target for a socket path. */
export function grpcTarget(socketPath: string): string {
  return `unix://${socketPath}`
}
