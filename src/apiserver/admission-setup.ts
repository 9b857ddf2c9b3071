// The admission chain `orch server` runs, in Kubernetes' order: TaintNodesByCondition and
// DefaultTolerationSeconds, the mutating admission policies,
// then NodeRestriction, CertificateApproval, CertificateSigning, CertificateSubjectRestriction, the
// validating admission policies and the validating webhooks. Their
// inputs come from the server's own watch caches (configurations, services, pods, namespaces).
import {AdmissionChain} from '../admission/chain.js'
import {NodeRestriction} from '../admission/noderestriction.js'
import {CertificateApproval, CertificateSigning, CertificateSubjectRestriction} from '../admission/certificates.js'
import {celEngine} from '../admission/cel/engine.js'
import {compileOne, evaluateMatchConditions, PARAM_SCHEMA, type Compiled} from '../admission/policy/compiled.js'
import {POLICY_EVALUATION_BUDGET, type CelEngine, type PolicyAuthorizer} from '../admission/policy/engine.js'
import {MutatingPolicyPlugin} from '../admission/policy/mutating.js'
import {DefaultTolerationSeconds} from '../admission/default-toleration-seconds.js'
import {TaintNodesByCondition} from '../admission/taint-nodes-by-condition.js'
import type {ParamLookup} from '../admission/policy/params.js'
import {ValidatingPolicyPlugin} from '../admission/policy/validating.js'
import {admissionReview, ValidatingWebhookDispatcher, type ConditionOutcome, type ServiceEndpoint} from '../admission/webhook.js'
import {setExpressionCompiler} from './validation/index.js'
import type {AdmissionAttributes} from '../admission/types.js'
import type {AnyObject} from '../api/types.js'
import type {Logger} from '../machinery/log.js'
import {labelSelectorFromSet} from '../machinery/labels.js'
import type {ResourceRegistry} from './registry.js'

export interface AdmissionSources {
  registry(group: string, resource: string): ResourceRegistry
  /** the registry serving a kind (params of policies) */
  registryForKind(group: string, version: string, kind: string): ResourceRegistry | undefined
  /** the server's authorizer, for CEL's `authorizer` */
  authorizer: PolicyAuthorizer
  logger: Logger
}

function cachedObjects(registry: ResourceRegistry): AnyObject[] {
  return registry.cache.list().items.map((entry) => entry.object)
}

function isReady(pod: AnyObject): boolean {
  return pod.status?.phase === 'Running' && (pod.status?.conditions ?? []).some((c: AnyObject) => c?.type === 'Ready' && c?.status === 'True')
}

/** A webhook `service` reference: orch has no service proxy, so the server connects to a ready pod
 *  the Service selects (its podIP and the port's targetPort, a named targetPort looked up in the
 *  pod's containers), verifying TLS for `<service>.<namespace>.svc` as Kubernetes does. */
export function serviceResolver(services: ResourceRegistry, pods: ResourceRegistry) {
  return async (namespace: string, name: string, port: number): Promise<ServiceEndpoint> => {
    const service = services.cache.get(services.key(namespace, name))?.object
    if (!service) throw new Error(`service "${namespace}/${name}" not found`)
    const servicePort = (service.spec?.ports ?? []).find((p: AnyObject) => p?.port === port)
    if (!servicePort) throw new Error(`service "${namespace}/${name}" has no port ${port}`)
    const selector = service.spec?.selector
    if (!selector || Object.keys(selector).length === 0) throw new Error(`service "${namespace}/${name}" has no selector`)
    const matches = labelSelectorFromSet(selector)
    for (const pod of cachedObjects(pods)) {
      if (pod.metadata?.namespace !== namespace || !matches.matches(pod.metadata?.labels ?? {}) || !isReady(pod) || !pod.status?.podIP) continue
      const target = servicePort.targetPort ?? port
      let targetPort = typeof target === 'number' ? target : Number(target)
      if (!Number.isInteger(targetPort)) {
        const named = (pod.spec?.containers ?? []).flatMap((c: AnyObject) => c?.ports ?? []).find((p: AnyObject) => p?.name === target)
        if (!named) continue
        targetPort = named.containerPort
      }
      return {host: pod.status.podIP, port: targetPort, servername: `${name}.${namespace}.svc`}
    }
    throw new Error(`no endpoints available for service "${name}"`)
  }
}

/** Param objects of a kind, from its registry's watch cache, each tagged with the kind's schema. */
function paramLookup(sources: AdmissionSources): ParamLookup {
  return (apiVersion, kind) => {
    const slash = apiVersion.indexOf('/')
    const group = slash < 0 ? '' : apiVersion.slice(0, slash)
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1)
    const registry = sources.registryForKind(group, version, kind)
    if (!registry) return undefined
    const schema = registry.declaration.schema
    return {
      namespaced: registry.declaration.namespaced,
      objects: (namespace) =>
        cachedObjects(registry)
          .filter((o) => !registry.declaration.namespaced || o.metadata?.namespace === namespace)
          .map((o) => ({...o, [PARAM_SCHEMA]: schema})),
    }
  }
}

/** Webhook matchConditions in CEL (compiled once per expression). */
function webhookConditions(engine: CelEngine, authorizer: PolicyAuthorizer) {
  const compiled = new Map<string, Compiled>()
  return (conditions: AnyObject[], attributes: AdmissionAttributes): ConditionOutcome => {
    const base = {
      matchConditions: conditions.map((c) => {
        const expression = String(c.expression ?? '')
        let entry = compiled.get(expression)
        if (!entry) {
          entry = compileOne(engine, expression, {kind: 'matchCondition', hasParams: false, variables: []})
          compiled.set(expression, entry)
        }
        return {name: String(c.name), expression, compiled: entry}
      }),
      variables: [],
      hasParams: false,
    }
    const activation = {
      object: attributes.object,
      oldObject: attributes.oldObject,
      request: admissionReview('', attributes).request,
      params: undefined,
      namespaceObject: null,
      variables: [],
      authorizer,
      objectSchema: attributes.declaration.schema,
    }
    return evaluateMatchConditions(base.matchConditions, activation, {remaining: POLICY_EVALUATION_BUDGET})
  }
}

export function buildAdmissionChain(sources: AdmissionSources): AdmissionChain {
  const engine = celEngine()
  setExpressionCompiler((expression, scope) => {
    const result = engine.compile(expression, scope)
    return 'errors' in result ? result.errors : []
  })
  const chain = new AdmissionChain()
  const admission = (resource: string) => sources.registry('admissionregistration.orch.io', resource)
  const policySources = {
    params: paramLookup(sources),
    engine,
    authorizer: sources.authorizer,
    logger: sources.logger,
  }
  // the built-in plugins first, in Kubernetes' order, then the policies and webhooks
  chain.addMutating(new TaintNodesByCondition())
  chain.addMutating(new DefaultTolerationSeconds())
  chain.addMutating(
    new MutatingPolicyPlugin({
      ...policySources,
      policies: () => cachedObjects(admission('mutatingadmissionpolicies')),
      bindings: () => cachedObjects(admission('mutatingadmissionpolicybindings')),
    }),
  )
  const pods = sources.registry('', 'pods')
  chain.addValidating(new NodeRestriction((namespace, name) => {
    const pod = pods.cache.get(pods.key(namespace, name))?.object
    return pod ? (pod.spec?.nodeName ?? '') : undefined
  }))
  chain.addValidating(new CertificateApproval(sources.authorizer))
  chain.addValidating(new CertificateSigning(sources.authorizer))
  chain.addValidating(new CertificateSubjectRestriction())
  chain.addValidating(
    new ValidatingPolicyPlugin({
      ...policySources,
      policies: () => cachedObjects(admission('validatingadmissionpolicies')),
      bindings: () => cachedObjects(admission('validatingadmissionpolicybindings')),
    }),
  )
  chain.addValidating(
    new ValidatingWebhookDispatcher({
      configurations: () => cachedObjects(admission('validatingwebhookconfigurations')),
      resolveService: serviceResolver(sources.registry('', 'services'), sources.registry('', 'pods')),
      evaluateConditions: webhookConditions(engine, sources.authorizer),
      logger: sources.logger,
    }),
  )
  return chain
}
