// Pod spec → CRI configuration, as the kubelet's kuberuntime builds it: the sandbox (metadata, hostname,
// log directory, labels, DNS, security context) and each container (command, env, mounts, resources,
// security context with the seed's seccomp rules, swap limits as the kubelet sets them); env from
// values, fieldRefs and ConfigMaps with $(VAR) expansion, and configMap volumes (configmap-volume.ts).
import {mkdirSync} from 'node:fs'
import {isAbsolute, join, normalize, relative} from 'node:path'
import type {AnyObject} from '../../api/types.js'
import {quantityValue} from '../../api/core/pod.js'
import type {ContainerConfig, DeepPartial, LinuxContainerResources, Mount, NamespaceModeName, PodSandboxConfig, SecurityProfile} from '../cri/types.js'
import {configMapNotFound, configMapVolumes, setUpConfigMapVolume, type ConfigMapSource} from './configmap-volume.js'
import {expand, expandCommandAndArgs, mappingFor} from './expansion.js'
import {ensureEmptyDir, podLogDirectory} from './pod-dirs.js'
import {isCriticalPod, podQOS, quantityOrZero} from './qos.js'

export const LABEL_POD_NAME = 'io.orch.pod.name'
export const LABEL_POD_NAMESPACE = 'io.orch.pod.namespace'
export const LABEL_POD_UID = 'io.orch.pod.uid'
export const LABEL_CONTAINER_NAME = 'io.orch.container.name'
/** init containers carry this label so that status can tell them apart */
export const LABEL_CONTAINER_KIND = 'io.orch.container.kind'

export interface ConfigContext {
  rootDir: string
  nodeName: string
  hostIP: string
  podIP?: string
  swapBehavior: 'NoSwap' | 'LimitedSwap'
  /** node memory and swap, for LimitedSwap */
  memoryBytes: number
  swapBytes: number
  /** the host's cgroups (host.ts cgroupReading): v2 limits swap with memory.swap.max; without a swap controller nothing is set */
  cgroupV2: boolean
  swapControllerAvailable: boolean
  seccompDefault: boolean
  clusterDNS: string[]
  clusterDomain: string
  /** where ConfigMaps come from (env, envFrom, configMap volumes); none in standalone mode */
  configMaps?: ConfigMapSource
}

/** A problem that makes container creation fail with CreateContainerError (or CreateContainerConfigError). */
export class ContainerConfigError extends Error {
  constructor(
    /** ContainerCreating: a volume could not be set up (the kubelet's FailedMount; the container has not been created) */
    readonly reason: 'CreateContainerError' | 'CreateContainerConfigError' | 'ContainerCreating',
    message: string,
  ) {
    super(message)
  }
}

/**
 * The kubelet's namespacesForPod, for the sandbox and for every container: network and IPC are the
 * pod's (POD) or the host's (hostNetwork, hostIPC: NODE); PID is the container's own (CONTAINER, the
 * app is PID 1), the pod's with shareProcessNamespace (POD) or the host's with hostPID (NODE).
 */
export function namespacesForPod(pod: AnyObject): {network: NamespaceModeName; pid: NamespaceModeName; ipc: NamespaceModeName} {
  const spec = pod.spec ?? {}
  const pid: NamespaceModeName = spec.hostPID === true ? 'NODE' : spec.shareProcessNamespace === true ? 'POD' : 'CONTAINER'
  return {network: spec.hostNetwork === true ? 'NODE' : 'POD', pid, ipc: spec.hostIPC === true ? 'NODE' : 'POD'}
}

export function sandboxConfig(pod: AnyObject, attempt: number, context: ConfigContext): DeepPartial<PodSandboxConfig> {
  const meta = pod.metadata!
  const spec = pod.spec ?? {}
  const hostNetwork = spec.hostNetwork === true
  const logDirectory = podLogDirectory(context.rootDir, pod)
  mkdirSync(logDirectory, {recursive: true, mode: 0o755})
  const config: DeepPartial<PodSandboxConfig> = {
    metadata: {name: meta.name, namespace: meta.namespace, uid: meta.uid, attempt},
    // host-network pods must not set a hostname (the runtime would change the host's)
    hostname: hostNetwork ? '' : String(spec.hostname ?? meta.name).slice(0, 63),
    logDirectory,
    labels: {...(meta.labels ?? {}), [LABEL_POD_NAME]: meta.name, [LABEL_POD_NAMESPACE]: meta.namespace, [LABEL_POD_UID]: meta.uid},
    annotations: {...(meta.annotations ?? {})},
    linux: {
      cgroupParent: '',
      securityContext: {
        namespaceOptions: namespacesForPod(pod),
        privileged: (spec.containers ?? []).some((c: AnyObject) => c.securityContext?.privileged === true),
      },
    },
  }
  if (context.clusterDNS.length > 0 && !hostNetwork) {
    const searches = context.clusterDomain ? [`${meta.namespace}.svc.${context.clusterDomain}`, `svc.${context.clusterDomain}`, context.clusterDomain] : []
    config.dnsConfig = {servers: context.clusterDNS, searches, options: ['ndots:5']}
  }
  return config
}

/** The seed's seccomp rules: the container's own setting over the pod's; privileged = Unconfined; Localhost under {root}/seccomp. */
export function seccompFor(pod: AnyObject, container: AnyObject, context: ConfigContext): DeepPartial<SecurityProfile> {
  if (container.securityContext?.privileged === true) return {profileType: 'Unconfined'}
  const profile = container.securityContext?.seccompProfile ?? pod.spec?.securityContext?.seccompProfile
  const type = profile?.type ?? (context.seccompDefault ? 'RuntimeDefault' : 'Unconfined')
  if (type === 'Unconfined') return {profileType: 'Unconfined'}
  if (type === 'RuntimeDefault') return {profileType: 'RuntimeDefault'}
  if (type === 'Localhost') {
    const name = String(profile?.localhostProfile ?? '')
    const base = join(context.rootDir, 'seccomp')
    const path = normalize(join(base, name))
    const inside = relative(base, path)
    if (name === '' || isAbsolute(name) || inside.startsWith('..') || inside === '') {
      throw new ContainerConfigError('CreateContainerError', `invalid Localhost seccomp profile ${JSON.stringify(name)}: it must name a file under ${base}`)
    }
    return {profileType: 'Localhost', localhostRef: path}
  }
  throw new ContainerConfigError('CreateContainerError', `unknown seccomp profile type ${JSON.stringify(type)}`)
}

/** cgroup v2's file for the swap a cgroup may use (the kubelet's Cgroup2MaxSwapFilename) */
export const CGROUP2_SWAP_MAX = 'memory.swap.max'

/**
 * The kubelet's GetContainerSwapBehavior: LimitedSwap only on cgroup v2 with a swap controller, and
 * only for a container of a Burstable, non-critical pod that asks for memory with a request different
 * from its limit; everything else is NoSwap.
 */
export function containerSwapBehavior(pod: AnyObject, container: AnyObject, context: ConfigContext): 'NoSwap' | 'LimitedSwap' {
  if (context.swapBehavior !== 'LimitedSwap') return 'NoSwap'
  if (!context.swapControllerAvailable || !context.cgroupV2) return 'NoSwap'
  if (isCriticalPod(pod)) return 'NoSwap'
  const request = quantityOrZero(container.resources?.requests?.memory)
  const limit = quantityOrZero(container.resources?.limits?.memory)
  const asksNoMemory = request === 0 && limit === 0
  if (podQOS(pod) !== 'Burstable' || asksNoMemory || request === limit) return 'NoSwap'
  return 'LimitedSwap'
}

/** The kubelet's calcSwapForBurstablePods: request / node memory × node swap, or undefined when it cannot be computed. */
export function swapForBurstableContainer(memoryRequest: number, nodeMemory: number, nodeSwap: number): number | undefined {
  if (nodeMemory <= 0 || memoryRequest > nodeMemory) return undefined
  return Math.trunc((memoryRequest / nodeMemory) * nodeSwap)
}

/** The kubelet's configureContainerSwapResources (OCI runtime spec semantics of the CRI fields). */
function configureSwap(resources: DeepPartial<LinuxContainerResources>, pod: AnyObject, container: AnyObject, context: ConfigContext): void {
  if (!context.swapControllerAvailable) return
  const noSwap = (): void => {
    if (!context.cgroupV2) {
      // v1: memory+swap = memory, i.e. no swap above the memory limit (ignored without a memory limit)
      resources.memorySwapLimitInBytes = resources.memoryLimitInBytes ?? 0
      return
    }
    resources.unified = {...(resources.unified ?? {}), [CGROUP2_SWAP_MAX]: '0'}
  }
  if (containerSwapBehavior(pod, container, context) !== 'LimitedSwap') return noSwap()
  const swap = swapForBurstableContainer(quantityOrZero(container.resources?.requests?.memory), context.memoryBytes, context.swapBytes)
  if (swap === undefined) return noSwap()
  resources.unified = {...(resources.unified ?? {}), [CGROUP2_SWAP_MAX]: String(swap)}
}

function resourcesFor(pod: AnyObject, container: AnyObject, context: ConfigContext): DeepPartial<LinuxContainerResources> {
  const limits = container.resources?.limits ?? {}
  const requests = container.resources?.requests ?? {}
  const resources: DeepPartial<LinuxContainerResources> = {}
  const cpuRequest = quantityValue(requests.cpu ?? limits.cpu)
  if (Number.isFinite(cpuRequest)) resources.cpuShares = Math.max(2, Math.floor(cpuRequest * 1024))
  const cpuLimit = quantityValue(limits.cpu)
  if (Number.isFinite(cpuLimit)) {
    resources.cpuPeriod = 100_000
    resources.cpuQuota = Math.max(1000, Math.floor(cpuLimit * 100_000))
  }
  const memoryLimit = quantityValue(limits.memory)
  if (Number.isFinite(memoryLimit) && memoryLimit > 0) resources.memoryLimitInBytes = Math.floor(memoryLimit)
  configureSwap(resources, pod, container, context)
  return resources
}

function fieldValue(pod: AnyObject, path: string, context: ConfigContext): string {
  switch (path) {
    case 'metadata.name':
      return pod.metadata!.name
    case 'metadata.namespace':
      return pod.metadata!.namespace
    case 'metadata.uid':
      return pod.metadata!.uid
    case 'spec.nodeName':
      return context.nodeName
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? ''
    case 'status.hostIP':
      return context.hostIP
    case 'status.podIP':
      return context.podIP ?? ''
    default: {
      const label = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(path)
      if (label) return pod.metadata?.[label[1]]?.[label[2]] ?? ''
      throw new ContainerConfigError('CreateContainerConfigError', `unsupported fieldRef ${JSON.stringify(path)}`)
    }
  }
}

/** Fetches each ConfigMap once per container config (the kubelet's configMaps map in makeEnvironmentVariables). */
class ConfigMapLookup {
  private readonly seen = new Map<string, AnyObject | undefined>()
  constructor(
    private readonly namespace: string,
    private readonly source: ConfigMapSource | undefined,
  ) {}

  /** the ConfigMap; undefined when it does not exist and optional; throws otherwise */
  async get(name: string, optional: boolean): Promise<AnyObject | undefined> {
    if (!this.seen.has(name)) {
      if (!this.source) throw new ContainerConfigError('CreateContainerConfigError', `couldn't get configMap ${this.namespace}/${name}, no API client defined (standalone mode)`)
      let configMap: AnyObject | undefined
      try {
        configMap = await this.source.get(this.namespace, name)
      } catch (error) {
        throw new ContainerConfigError('CreateContainerConfigError', (error as Error).message)
      }
      if (!configMap) {
        if (optional) return undefined
        throw new ContainerConfigError('CreateContainerConfigError', configMapNotFound(name))
      }
      this.seen.set(name, configMap)
    }
    return this.seen.get(name)
  }
}

const noSecrets = (what: string): ContainerConfigError =>
  new ContainerConfigError('CreateContainerConfigError', `${what}: orch has no Secrets (secretKeyRef and secretRef are not supported)`)

/**
 * The kubelet's makeEnvironmentVariables (1.32, RelaxedEnvironmentVariableValidation on: envFrom keys
 * are not filtered): envFrom first (ConfigMap keys with the prefix), then env in order, later entries
 * winning; a `value` is expanded against what is defined so far (`$(VAR)`), a valueFrom is not. A
 * missing ConfigMap or key that is not optional is CreateContainerConfigError in the kubelet's words.
 */
export async function envFor(pod: AnyObject, container: AnyObject, context: ConfigContext): Promise<{key: string; value: string}[]> {
  const namespace = pod.metadata!.namespace as string
  const configMaps = new ConfigMapLookup(namespace, context.configMaps)
  const env = new Map<string, string>()
  for (const source of container.envFrom ?? []) {
    if (source.secretRef) throw noSecrets(`envFrom secretRef ${JSON.stringify(source.secretRef.name)}`)
    if (!source.configMapRef) continue
    const configMap = await configMaps.get(source.configMapRef.name, source.configMapRef.optional === true)
    if (!configMap) continue
    for (const [key, value] of Object.entries(configMap.data ?? {})) env.set(`${source.prefix ?? ''}${key}`, String(value))
  }
  const mapping = mappingFor(env)
  for (const entry of container.env ?? []) {
    const from = entry.valueFrom
    let value: string
    if (entry.value !== undefined && entry.value !== '') value = expand(String(entry.value), mapping)
    else if (from?.fieldRef) value = fieldValue(pod, from.fieldRef.fieldPath, context)
    else if (from?.configMapKeyRef) {
      const ref = from.configMapKeyRef
      const optional = ref.optional === true
      const configMap = await configMaps.get(ref.name, optional)
      if (!configMap) continue
      const data = configMap.data ?? {}
      if (!Object.hasOwn(data, ref.key)) {
        if (optional) continue
        throw new ContainerConfigError('CreateContainerConfigError', `couldn't find key ${ref.key} in ConfigMap ${namespace}/${ref.name}`)
      }
      value = String(data[ref.key])
    } else if (from?.secretKeyRef) throw noSecrets(`env ${entry.name}`)
    else if (from?.resourceFieldRef) throw new ContainerConfigError('CreateContainerConfigError', `env ${entry.name}: resourceFieldRef is not supported`)
    else value = ''
    env.set(entry.name, value)
  }
  return [...env].map(([key, value]) => ({key, value}))
}

/**
 * The container's mounts. The pod's configMap volumes are set up (written, or brought up to date)
 * first, as the kubelet mounts every volume of the pod before its containers start; one that fails
 * keeps the container waiting with reason ContainerCreating and the kubelet's FailedMount message.
 */
async function mountsFor(pod: AnyObject, container: AnyObject, context: ConfigContext): Promise<DeepPartial<Mount>[]> {
  const volumes = new Map<string, AnyObject>((pod.spec?.volumes ?? []).map((v: AnyObject) => [v.name, v]))
  const configMapDirs = new Map<string, string>()
  for (const volume of configMapVolumes(pod)) {
    try {
      configMapDirs.set(volume.name, (await setUpConfigMapVolume(context.rootDir, pod, volume, context.configMaps)).path)
    } catch (error) {
      throw new ContainerConfigError('ContainerCreating', `MountVolume.SetUp failed for volume ${JSON.stringify(volume.name)} : ${(error as Error).message}`)
    }
  }
  return (container.volumeMounts ?? []).map((mount: AnyObject) => {
    const volume = volumes.get(mount.name)
    if (!volume) throw new ContainerConfigError('CreateContainerConfigError', `volume ${JSON.stringify(mount.name)} is not defined`)
    let hostPath: string
    // a configMap volume is mounted read-only whatever the mount says (the plugin's ReadOnly attribute)
    let readonly = mount.readOnly === true
    if (volume.hostPath) hostPath = volume.hostPath.path
    else if (volume.emptyDir) {
      hostPath = ensureEmptyDir(context.rootDir, pod.metadata!.uid, volume.name)
    } else if (volume.configMap) {
      hostPath = configMapDirs.get(volume.name)!
      readonly = true
    } else throw new ContainerConfigError('CreateContainerConfigError', `volume ${JSON.stringify(volume.name)}: only hostPath, emptyDir and configMap volumes are supported`)
    if (mount.subPath) hostPath = join(hostPath, mount.subPath)
    return {containerPath: mount.mountPath, hostPath, readonly}
  })
}

export async function containerConfig(pod: AnyObject, container: AnyObject, kind: 'init' | 'app', attempt: number, context: ConfigContext): Promise<DeepPartial<ContainerConfig>> {
  const meta = pod.metadata!
  const security = container.securityContext ?? {}
  const podSecurity = pod.spec?.securityContext ?? {}
  const runAsUser = security.runAsUser ?? podSecurity.runAsUser
  const runAsGroup = security.runAsGroup ?? podSecurity.runAsGroup
  const mounts = await mountsFor(pod, container, context)
  const envs = await envFor(pod, container, context)
  // command and args are expanded against the container's final env (ExpandContainerCommandAndArgs)
  const {command, args} = expandCommandAndArgs(container, envs)
  return {
    metadata: {name: container.name, attempt},
    image: {image: container.image},
    command,
    args,
    workingDir: container.workingDir ?? '',
    envs,
    mounts,
    labels: {[LABEL_POD_NAME]: meta.name, [LABEL_POD_NAMESPACE]: meta.namespace, [LABEL_POD_UID]: meta.uid, [LABEL_CONTAINER_NAME]: container.name, [LABEL_CONTAINER_KIND]: kind},
    annotations: {'io.orch.container.restartCount': String(attempt)},
    logPath: join(container.name, `${attempt}.log`),
    linux: {
      resources: resourcesFor(pod, container, context),
      securityContext: {
        privileged: security.privileged === true,
        namespaceOptions: namespacesForPod(pod),
        seccomp: seccompFor(pod, container, context),
        ...(runAsUser !== undefined ? {runAsUser: {value: runAsUser}} : {}),
        ...(runAsGroup !== undefined ? {runAsGroup: {value: runAsGroup}} : {}),
        readonlyRootfs: security.readOnlyRootFilesystem === true,
      },
    },
  }
}
