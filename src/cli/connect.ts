// How a client command reaches the server: the global flags (--server, --kubeconfig, --context,
// -n/--namespace, --wire, and --as/--as-group/--as-uid to impersonate), the client built from them,
// and the one-line messages for what can go wrong on the way (an API Status, a refused connection, a
// bad kubeconfig). The configuration path is generic: whatever resolveClientConfig finds (TLS and
// tokens from the kubeconfig) goes to RestClient. Every Warning header the server sends is printed on
// stderr as `Warning: <text>`, as kubectl does.
import {Flags} from '@oclif/core'
import {RestClient, isApiStatusError, resolveClientConfig, type ClientConfig, type ImpersonationConfig, type Wire} from '../client/index.js'
import {fail} from './fail.js'

export const wires = ['json', 'protobuf', 'cbor'] as const

/** The flags every client command takes. */
export const globalFlags = {
  server: Flags.string({char: 's', description: 'the address of the API server (overrides the kubeconfig)', helpGroup: 'GLOBAL'}),
  kubeconfig: Flags.string({description: 'the kubeconfig file (default: the files of $KUBECONFIG, merged, else ~/.orch/config)', helpGroup: 'GLOBAL'}),
  context: Flags.string({description: 'the kubeconfig context to use (default: its current-context)', helpGroup: 'GLOBAL'}),
  namespace: Flags.string({char: 'n', description: "the namespace (default: the context's, else default)", helpGroup: 'GLOBAL'}),
  wire: Flags.option({
    options: wires,
    description: 'the encoding to ask the server for in responses and watches (JSON where it has no other form)',
    default: 'json',
    helpGroup: 'GLOBAL',
  })(),
  as: Flags.string({description: 'the user to impersonate: a user name or a service account (system:serviceaccount:NAMESPACE:NAME)', helpGroup: 'GLOBAL'}),
  'as-group': Flags.string({description: 'a group to impersonate (repeat for several; needs --as)', multiple: true, multipleNonGreedy: true, helpGroup: 'GLOBAL'}),
  'as-uid': Flags.string({description: 'the UID to impersonate (needs --as)', helpGroup: 'GLOBAL'}),
}

export interface ConnectOptions {
  server?: string
  kubeconfig?: string
  context?: string
  namespace?: string
  /** the response encoding (default json) */
  wire?: Wire
  /** --as, --as-group, --as-uid: who the requests are made as */
  as?: string
  asGroups?: string[]
  asUid?: string
}

/** The connection options of a command's parsed global flags. */
export function connectOptions(flags: {
  server?: string
  kubeconfig?: string
  context?: string
  namespace?: string
  wire?: Wire
  as?: string
  'as-group'?: string[]
  'as-uid'?: string
}): ConnectOptions {
  return {
    server: flags.server,
    kubeconfig: flags.kubeconfig,
    context: flags.context,
    namespace: flags.namespace,
    wire: flags.wire,
    as: flags.as,
    asGroups: flags['as-group'],
    asUid: flags['as-uid'],
  }
}

/** The impersonation --as, --as-group and --as-uid ask for; groups or a uid without a user is an error,
 *  as kubectl's configuration check has it. */
function impersonationOf(options: ConnectOptions): ImpersonationConfig | undefined {
  const groups = options.asGroups ?? []
  if (!options.as) {
    if (groups.length > 0 || options.asUid) fail('requesting uid, groups or user-extra without impersonating a user: pass --as')
    return undefined
  }
  const impersonate: ImpersonationConfig = {user: options.as}
  if (groups.length > 0) impersonate.groups = [...groups]
  if (options.asUid) impersonate.uid = options.asUid
  return impersonate
}

/** A client and what the command needs to know about where it points. */
export interface Session {
  client: RestClient
  /** the server URL, for messages */
  server: string
  /** -n, else the context's namespace, else default */
  namespace: string
  /** true when -n/--namespace was given */
  explicitNamespace: boolean
}

/** Resolves the client configuration and opens a client; a bad configuration fails the command. */
export function connect(options: ConnectOptions): Session {
  let config: ClientConfig
  try {
    config = resolveClientConfig({
      server: options.server,
      kubeconfig: options.kubeconfig,
      context: options.context,
      namespace: options.namespace,
    })
  } catch (error) {
    fail((error as Error).message)
  }
  // --as and its companions override the kubeconfig user's as, as-groups and as-uid field by field,
  // as kubectl merges its flags into the user entry
  const impersonate = impersonationOf(options)
  if (impersonate) {
    const fromFile = config.impersonate
    config = {
      ...config,
      impersonate: {
        ...fromFile,
        // impersonationOf sets groups and uid only when given, so the file's stay otherwise
        ...impersonate,
      },
    }
  }
  let client: RestClient
  try {
    client = new RestClient(config, {
      userAgent: 'orch-cli',
      wire: options.wire ?? 'json',
      onWarning: (warning) => process.stderr.write(`Warning: ${warning}\n`),
    })
  } catch (error) {
    fail((error as Error).message)
  }
  return {client, server: config.server, namespace: config.namespace, explicitNamespace: Boolean(options.namespace)}
}

const networkCodes = new Set(['ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET', 'EPIPE'])

/** The system error codes anywhere in an error: its own, its cause's, an AggregateError's members'. */
function errorCodes(error: unknown, depth = 0): string[] {
  if (typeof error !== 'object' || error === null || depth > 4) return []
  const e = error as {code?: unknown; cause?: unknown; errors?: unknown}
  const out: string[] = typeof e.code === 'string' ? [e.code] : []
  out.push(...errorCodes(e.cause, depth + 1))
  if (Array.isArray(e.errors)) for (const inner of e.errors) out.push(...errorCodes(inner, depth + 1))
  return out
}

/** One line for any failure of a client command: the server's Status message, or what went wrong reaching it. */
export function errorMessage(error: unknown, server: string): string {
  if (isApiStatusError(error)) return error.message
  const codes = errorCodes(error)
  if (codes.includes('ECONNREFUSED')) {
    return `the connection to the server ${server} was refused - did you specify the right host or port?`
  }
  const message = error instanceof Error ? error.message : String(error)
  if (codes.some((code) => networkCodes.has(code) || code.startsWith('UND_ERR') || code.startsWith('ERR_TLS') || code.includes('CERT'))) {
    return `unable to connect to the server ${server}: ${message || codes[0]}`
  }
  return message
}

/** Prints `error: <one line>` on stderr without ending the command (for failures that let it go on). */
export function reportError(error: unknown, server: string): void {
  const line = errorMessage(error, server).split('\n')[0].trim()
  process.stderr.write(`error: ${line}\n`)
}

/**
 * Runs a command body with a session: any error it throws fails the command with one line; the exit code
 * it returns is the process's. The client is closed either way so no idle connection keeps the process up.
 */
export async function withSession(options: ConnectOptions, body: (session: Session) => Promise<number>): Promise<void> {
  const session = connect(options)
  let code: number
  try {
    code = await body(session)
  } catch (error) {
    void session.client.destroy()
    fail(errorMessage(error, session.server))
  }
  await session.client.destroy()
  process.exitCode = code
}
