// Validating admission webhooks: for each matching webhook of every ValidatingWebhookConfiguration,
// an AdmissionReview is POSTed over TLS (verified with the caBundle, else the system roots) to the
// webhook's URL with `?timeout=<timeoutSeconds>s`, all webhooks in parallel. Its version is the first
// of the webhook's admissionReviewVersions orch supports — `admission.orch.io/v1` or `v1beta1`, of the
// same shape — and the answer must be an AdmissionReview of that version (a v1 answer also with the
// request's uid, as Kubernetes checks it). A denial answers the request with the webhook's status
// (`admission webhook "NAME" denied the request: MESSAGE`); a webhook that cannot be called, times
// out or answers garbage obeys its failurePolicy (Fail: 500, Ignore: skipped and logged). A dry-run
// request matching a webhook with side effects (Some, Unknown) is refused without calling it.
// Requests on webhook configurations themselves never reach webhooks.
import {randomUUID} from 'node:crypto'
import {request as httpsRequest} from 'node:https'
import type {AnyObject} from '../api/types.js'
import type {Logger} from '../machinery/log.js'
import {ApiError, errors, type StatusReason} from '../machinery/status.js'
import {namespaceSelectorMatches, objectSelectorMatches, ruleMatches, type Rule} from './matching.js'
import type {AdmissionAttributes, ValidatingPlugin} from './types.js'

export const ADMISSION_GROUP = 'admission.orch.io'
export const ADMISSION_GROUP_VERSION = `${ADMISSION_GROUP}/v1`
/** The AdmissionReview versions orch sends, in no order of preference: the webhook's list decides. */
export const SUPPORTED_REVIEW_VERSIONS = ['v1', 'v1beta1']
/** how much of a response body is read at most */
const MAX_RESPONSE_BYTES = 3 * 1024 * 1024

/** Where a `service` reference is reached: host and port to connect to, and the TLS server name. */
export interface ServiceEndpoint {
  host: string
  port: number
  servername: string
}

/** The outcome of a webhook's matchConditions: call it, skip it, or an error (failurePolicy decides). */
export type ConditionOutcome = {match: true} | {match: false} | {error: string}

export interface WebhookDispatcherOptions {
  /** the ValidatingWebhookConfigurations in force (the server's watch cache) */
  configurations(): AnyObject[]
  /** a service reference to an address (see resolveServiceEndpoint) */
  resolveService(namespace: string, name: string, port: number): Promise<ServiceEndpoint>
  /** evaluates matchConditions (CEL); absent: webhooks with matchConditions fail as misconfigured */
  evaluateConditions?(conditions: AnyObject[], attributes: AdmissionAttributes): ConditionOutcome
  logger: Logger
}

/** A call that did not produce a usable answer. */
class CallError extends Error {}
/** A call that did not end within timeoutSeconds. */
class DeadlineError extends Error {}

function webhookMatches(webhook: AnyObject, attributes: AdmissionAttributes): boolean {
  const rules: Rule[] = Array.isArray(webhook.rules) ? webhook.rules : []
  return rules.some((rule) => ruleMatches(rule, attributes, false))
}

export function isWebhookConfigurationResource(attributes: AdmissionAttributes): boolean {
  const {group, resource} = attributes.resource
  return group === 'admissionregistration.orch.io' && (resource === 'validatingwebhookconfigurations' || resource === 'mutatingwebhookconfigurations')
}

/** The AdmissionReview request Kubernetes sends (request kinds equal the kinds: no conversion), in
 *  `version` (v1 and v1beta1 have the same shape). */
export function admissionReview(uid: string, attributes: AdmissionAttributes, version = 'v1'): AnyObject {
  const request: Record<string, unknown> = {
    uid,
    kind: attributes.kind,
    resource: attributes.resource,
    requestKind: attributes.kind,
    requestResource: attributes.resource,
    name: attributes.name,
    operation: attributes.operation,
    userInfo: attributes.userInfo,
    object: attributes.object,
    oldObject: attributes.oldObject,
    dryRun: attributes.dryRun,
    options: attributes.options,
  }
  if (attributes.subresource) {
    request.subResource = attributes.subresource
    request.requestSubResource = attributes.subresource
  }
  if (attributes.namespace) request.namespace = attributes.namespace
  return {apiVersion: `${ADMISSION_GROUP}/${version}`, kind: 'AdmissionReview', request}
}

/** The first of a webhook's admissionReviewVersions orch supports (undefined: none). */
export function reviewVersionFor(webhook: AnyObject): string | undefined {
  const versions: unknown[] = Array.isArray(webhook.admissionReviewVersions) ? webhook.admissionReviewVersions : []
  return versions.find((v): v is string => typeof v === 'string' && SUPPORTED_REVIEW_VERSIONS.includes(v))
}

/** apimachinery's GroupVersionKind.String() of an object's apiVersion and kind. */
function gvkOf(object: AnyObject): string {
  const apiVersion = typeof object.apiVersion === 'string' ? object.apiVersion : ''
  const slash = apiVersion.indexOf('/')
  const [group, version] = slash < 0 ? ['', apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)]
  return `${group}/${version}, Kind=${typeof object.kind === 'string' ? object.kind : ''}`
}

/** Kubernetes' VerifyAdmissionResponse for a validating webhook: why the answer is not usable
 *  (undefined: it is). A v1 review must carry the request's uid; both versions must answer in the
 *  version they were asked in. */
export function responseProblem(answer: AnyObject, version: string, uid: string): string | undefined {
  const response = answer.response
  if (typeof response !== 'object' || response === null) return 'webhook response was absent'
  if (version === 'v1' && response.uid !== uid) return `expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(String(response.uid ?? ''))}`
  const expected = `${ADMISSION_GROUP}/${version}, Kind=AdmissionReview`
  if (gvkOf(answer) !== expected) return `expected webhook response of ${expected}, got ${gvkOf(answer)}`
  if (version === 'v1' && response.patch !== undefined && response.patch !== null && response.patch !== '') return 'validating webhook may not return response.patch'
  if (version === 'v1' && response.patchType !== undefined && response.patchType !== null) return 'validating webhook may not return response.patchType'
  return undefined
}

/** The timeout Kubernetes' webhook client sends as `?timeout=`: timeoutSeconds (default 10) as a Go duration. */
function timeoutSecondsOf(webhook: AnyObject): number {
  return typeof webhook.timeoutSeconds === 'number' ? webhook.timeoutSeconds : 10
}

/** Kubernetes' webhookerrors.ToStatusErr: the webhook's status, at least 400, message prefixed. */
export function denial(name: string, status: AnyObject | undefined): ApiError {
  const code = typeof status?.code === 'number' && status.code >= 400 ? status.code : 400
  const deniedBy = `admission webhook "${name}" denied the request`
  const message = status?.message ? `${deniedBy}: ${status.message}` : status?.reason ? `${deniedBy}: ${status.reason}` : `${deniedBy} without explanation`
  // ToStatusErr keeps the webhook's reason, none when it gave none
  const reason = (typeof status?.reason === 'string' ? status.reason : '') as StatusReason
  return new ApiError(code, reason, message, status?.details)
}

function post(url: URL, body: Buffer, options: {ca?: string; servername?: string; host?: string; port?: number; timeoutMs: number}): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: options.host ?? url.hostname,
        port: options.port ?? (url.port ? Number(url.port) : 443),
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        ca: options.ca,
        servername: options.servername ?? url.hostname,
        headers: {'Content-Type': 'application/json', Accept: 'application/json', 'Content-Length': body.length},
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = []
        let size = 0
        response.on('data', (chunk: Buffer) => {
          size += chunk.length
          if (size > MAX_RESPONSE_BYTES) req.destroy(new CallError('the response is too large'))
          else chunks.push(chunk)
        })
        response.on('end', () => {
          if (response.statusCode !== 200) reject(new CallError(`the server answered ${response.statusCode}`))
          else resolve(Buffer.concat(chunks))
        })
        response.on('error', reject)
      },
    )
    const timer = setTimeout(() => req.destroy(new DeadlineError('context deadline exceeded')), options.timeoutMs)
    req.on('error', (error) => reject(error))
    req.on('close', () => clearTimeout(timer))
    req.end(body)
  })
}

export class ValidatingWebhookDispatcher implements ValidatingPlugin {
  readonly name = 'ValidatingAdmissionWebhook'

  constructor(private readonly options: WebhookDispatcherOptions) {}

  async validate(attributes: AdmissionAttributes): Promise<void> {
    if (isWebhookConfigurationResource(attributes)) return
    const calls: Promise<void>[] = []
    for (const configuration of this.options.configurations()) {
      for (const webhook of Array.isArray(configuration.webhooks) ? configuration.webhooks : []) {
        if (!webhookMatches(webhook, attributes)) continue
        if (!objectSelectorMatches(webhook.objectSelector, attributes)) continue
        calls.push(this.consider(configuration, webhook, attributes))
      }
    }
    if (calls.length === 0) return
    const results = await Promise.allSettled(calls)
    for (const result of results) if (result.status === 'rejected') throw result.reason
  }

  /** The namespace selector and match conditions, then the call, with the failure policy applied. */
  private async consider(configuration: AnyObject, webhook: AnyObject, attributes: AdmissionAttributes): Promise<void> {
    const name: string = webhook.name
    const fail = webhook.failurePolicy !== 'Ignore'
    const failed = (why: string) => {
      this.options.logger.warn('admission webhook failed', {webhook: name, configuration: configuration.metadata?.name, failurePolicy: fail ? 'Fail' : 'Ignore', error: why})
      if (fail) throw new ApiError(500, 'InternalError', `Internal error occurred: failed calling webhook "${name}": ${why}`)
    }
    if (!(await namespaceSelectorMatches(webhook.namespaceSelector, attributes))) return
    const conditions: AnyObject[] = Array.isArray(webhook.matchConditions) ? webhook.matchConditions : []
    if (conditions.length > 0) {
      const outcome: ConditionOutcome = this.options.evaluateConditions
        ? this.options.evaluateConditions(conditions, attributes)
        : {error: 'match conditions cannot be evaluated'}
      if ('error' in outcome) {
        // ShouldCallHook: an error without a false condition fails closed as Forbidden, or is passed
        // over under failurePolicy Ignore
        this.options.logger.warn('admission webhook match conditions failed', {webhook: name, failurePolicy: fail ? 'Fail' : 'Ignore', error: outcome.error})
        if (fail) throw errors.forbidden({group: attributes.resource.group, resource: attributes.resource.resource}, attributes.name, outcome.error)
        return
      }
      if (!outcome.match) return
    }
    if (attributes.dryRun && webhook.sideEffects !== 'None' && webhook.sideEffects !== 'NoneOnDryRun') {
      throw new ApiError(400, 'BadRequest', `admission webhook "${name}" does not support dry run`)
    }
    const version = reviewVersionFor(webhook)
    if (!version) return failed('could not create admission objects: webhook does not accept known AdmissionReview versions (v1, v1beta1)')
    const uid = randomUUID()
    let answer: AnyObject
    try {
      answer = await this.call(webhook, admissionReview(uid, attributes, version))
    } catch (error) {
      if (error instanceof CallError || error instanceof SyntaxError) return failed(`received invalid webhook response: ${error.message}`)
      return failed(`failed to call webhook: Post "${this.target(webhook)}": ${(error as Error).message}`)
    }
    if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return failed('received invalid webhook response: the answer is not an AdmissionReview object')
    const problem = responseProblem(answer, version, uid)
    if (problem) return failed(`received invalid webhook response: ${problem}`)
    const response = answer.response
    for (const warning of Array.isArray(response.warnings) ? response.warnings : []) attributes.warn(String(warning))
    for (const [key, value] of Object.entries(response.auditAnnotations ?? {})) attributes.annotate(`${name}/${key}`, String(value))
    if (response.allowed !== true) throw denial(name, response.status)
  }

  /** The URL a webhook is called at, with its `?timeout=`, for messages. */
  private target(webhook: AnyObject): string {
    const config = webhook.clientConfig ?? {}
    const timeout = `?timeout=${timeoutSecondsOf(webhook)}s`
    if (config.url) return `${config.url}${timeout}`
    const service = config.service ?? {}
    return `https://${service.name}.${service.namespace}.svc:${service.port ?? 443}${service.path ?? '/'}${timeout}`
  }

  private async call(webhook: AnyObject, review: AnyObject): Promise<AnyObject> {
    const config = webhook.clientConfig ?? {}
    const ca = config.caBundle ? Buffer.from(String(config.caBundle), 'base64').toString('utf8') : undefined
    const timeoutSeconds = timeoutSecondsOf(webhook)
    const timeoutMs = timeoutSeconds * 1000
    const body = Buffer.from(JSON.stringify(review))
    if (config.url) {
      const url = new URL(config.url)
      // Kubernetes' webhook client tells the webhook its deadline (the URL has no query: validation)
      url.search = `?timeout=${timeoutSeconds}s`
      return JSON.parse((await post(url, body, {ca, timeoutMs})).toString('utf8'))
    }
    const service = config.service ?? {}
    const endpoint = await this.options.resolveService(service.namespace, service.name, service.port ?? 443)
    const url = new URL(`https://${endpoint.servername}${service.path ?? '/'}`)
    url.search = `?timeout=${timeoutSeconds}s`
    return JSON.parse((await post(url, body, {ca, timeoutMs, host: endpoint.host, port: endpoint.port, servername: endpoint.servername})).toString('utf8'))
  }
}
