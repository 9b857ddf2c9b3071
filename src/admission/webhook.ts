// Validating admission webhooks: for each matching webhook of every ValidatingWebhookConfiguration,
// an `admission.orch.io/v1` AdmissionReview is POSTed over TLS (verified with the caBundle, else the
// system roots), all webhooks in parallel. A denial answers the request with the webhook's status
// (`admission webhook "NAME" denied the request: MESSAGE`); a webhook that cannot be called, times
// out or answers garbage obeys its failurePolicy (Fail: 500, Ignore: skipped and logged). A dry-run
// request matching a webhook with side effects (Some, Unknown) is refused without calling it.
// Requests on webhook configurations themselves never reach webhooks.
import {randomUUID} from 'node:crypto'
import {request as httpsRequest} from 'node:https'
import type {AnyObject} from '../api/types.js'
import type {Logger} from '../machinery/log.js'
import {ApiError, type StatusReason} from '../machinery/status.js'
import {namespaceSelectorMatches, objectSelectorMatches, ruleMatches, type Rule} from './matching.js'
import type {AdmissionAttributes, ValidatingPlugin} from './types.js'

export const ADMISSION_GROUP_VERSION = 'admission.orch.io/v1'
const SUPPORTED_REVIEW_VERSIONS = ['v1', 'v1beta1']
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

/** The AdmissionReview request Kubernetes sends (request kinds equal the kinds: no conversion). */
export function admissionReview(uid: string, attributes: AdmissionAttributes): AnyObject {
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
  return {apiVersion: ADMISSION_GROUP_VERSION, kind: 'AdmissionReview', request}
}

/** Kubernetes' webhookerrors.ToStatusErr: the webhook's status, at least 400, message prefixed. */
export function denial(name: string, status: AnyObject | undefined): ApiError {
  const code = typeof status?.code === 'number' && status.code >= 400 ? status.code : 400
  const deniedBy = `admission webhook "${name}" denied the request`
  const message = status?.message ? `${deniedBy}: ${status.message}` : status?.reason ? `${deniedBy}: ${status.reason}` : `${deniedBy} without explanation`
  const reason = (typeof status?.reason === 'string' && status.reason ? status.reason : code === 403 ? 'Forbidden' : 'BadRequest') as StatusReason
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
      if ('error' in outcome) return failed(`failed to evaluate match conditions: ${outcome.error}`)
      if (!outcome.match) return
    }
    if (attributes.dryRun && webhook.sideEffects !== 'None' && webhook.sideEffects !== 'NoneOnDryRun') {
      throw new ApiError(400, 'BadRequest', `admission webhook "${name}" does not support dry run`)
    }
    const versions: string[] = Array.isArray(webhook.admissionReviewVersions) ? webhook.admissionReviewVersions : []
    if (!versions.some((v) => SUPPORTED_REVIEW_VERSIONS.includes(v))) {
      return failed(`webhook does not accept known AdmissionReview versions: ${versions.join(', ')}`)
    }
    const uid = randomUUID()
    let answer: AnyObject
    try {
      answer = await this.call(webhook, admissionReview(uid, attributes))
    } catch (error) {
      if (error instanceof CallError || error instanceof SyntaxError) return failed(`received invalid webhook response: ${error.message}`)
      return failed(`failed to call webhook: Post "${this.target(webhook)}": ${(error as Error).message}`)
    }
    const response = answer.response
    if (answer.kind !== 'AdmissionReview' || typeof response !== 'object' || response === null) {
      return failed('received invalid webhook response: expected an AdmissionReview with a response')
    }
    if (response.uid !== uid) return failed(`received invalid webhook response: expected response.uid="${uid}", got "${response.uid ?? ''}"`)
    for (const warning of Array.isArray(response.warnings) ? response.warnings : []) attributes.warn(String(warning))
    for (const [key, value] of Object.entries(response.auditAnnotations ?? {})) attributes.annotate(`${name}/${key}`, String(value))
    if (response.allowed !== true) throw denial(name, response.status)
  }

  /** The URL a webhook is called at, for messages. */
  private target(webhook: AnyObject): string {
    const config = webhook.clientConfig ?? {}
    if (config.url) return config.url
    const service = config.service ?? {}
    return `https://${service.name}.${service.namespace}.svc:${service.port ?? 443}${service.path ?? '/'}`
  }

  private async call(webhook: AnyObject, review: AnyObject): Promise<AnyObject> {
    const config = webhook.clientConfig ?? {}
    const ca = config.caBundle ? Buffer.from(String(config.caBundle), 'base64').toString('utf8') : undefined
    const timeoutMs = (typeof webhook.timeoutSeconds === 'number' ? webhook.timeoutSeconds : 10) * 1000
    const body = Buffer.from(JSON.stringify(review))
    if (config.url) return JSON.parse((await post(new URL(config.url), body, {ca, timeoutMs})).toString('utf8'))
    const service = config.service ?? {}
    const endpoint = await this.options.resolveService(service.namespace, service.name, service.port ?? 443)
    const url = new URL(`https://${endpoint.servername}${service.path ?? '/'}`)
    return JSON.parse((await post(url, body, {ca, timeoutMs, host: endpoint.host, port: endpoint.port, servername: endpoint.servername})).toString('utf8'))
  }
}
