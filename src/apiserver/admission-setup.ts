// The admission chain `orch server` runs, in Kubernetes' order: NodeRestriction, then the mutating
// admission policies, then the validating admission policies and the validating webhooks. Their
// inputs come from the server's own watch caches (configurations, services, pods, namespaces).
import {AdmissionChain} from '../admission/chain.js'
import {NodeRestriction} from '../admission/noderestriction.js'
import {ValidatingWebhookDispatcher, type ConditionOutcome, type ServiceEndpoint} from '../admission/webhook.js'
import type {AdmissionAttributes} from '../admission/types.js'
import type {AnyObject} from '../api/types.js'
import type {Logger} from '../machinery/log.js'
import {labelSelectorFromSet} from '../machinery/labels.js'
import type {ResourceRegistry} from './registry.js'

export interface AdmissionSources {
  registry(group: string, resource: string): ResourceRegistry
  logger: Logger
  /** matchConditions of webhooks (CEL), when the CEL environment is there */
  evaluateConditions?(conditions: AnyObject[], attributes: AdmissionAttributes): ConditionOutcome
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

export function buildAdmissionChain(sources: AdmissionSources): AdmissionChain {
  const chain = new AdmissionChain().addValidating(new NodeRestriction())
  const webhookConfigurations = sources.registry('admissionregistration.orch.io', 'validatingwebhookconfigurations')
  chain.addValidating(
    new ValidatingWebhookDispatcher({
      configurations: () => cachedObjects(webhookConfigurations),
      resolveService: serviceResolver(sources.registry('', 'services'), sources.registry('', 'pods')),
      evaluateConditions: sources.evaluateConditions,
      logger: sources.logger,
    }),
  )
  return chain
}
