// `orch agent`: configuration (file, drop-ins, flags) → AgentSettings → a running Agent until SIGINT
// or SIGTERM. Bad configuration is one line on stderr and exit 1.
import {hostname} from 'node:os'
import {join, resolve} from 'node:path'
import {Agent, type AgentSettings} from '../agent/agent.js'
import {applyFlagOverrides, loadAgentConfiguration, printAgentConfiguration, validateAgentConfiguration, type AgentConfiguration} from '../agent/config/load.js'
import type {AnyObject} from '../api/types.js'
import {quantityBytes} from '../agent/pods/log-rotation.js'
import {parseDuration} from '../machinery/duration.js'
import {FEATURES} from '../machinery/features.js'
import {createLogger} from '../machinery/log.js'
import {fail} from './fail.js'

export interface AgentFlags {
  config?: string
  'config-dir'?: string
  'print-config': boolean
  kubeconfig?: string
  'bootstrap-kubeconfig'?: string
  'cert-dir'?: string
  'root-dir': string
  'lock-file': string
  'hostname-override'?: string
  runtime?: 'process' | 'cri'
  'container-runtime-endpoint'?: string
  'image-service-endpoint'?: string
  'process-runtime-images'?: string
  'pod-manifest-path'?: string
  address?: string
  port?: number
  'feature-gates'?: string
  'node-labels'?: string
  'register-with-taints'?: string
  'fail-swap-on'?: boolean
  'max-pods'?: number
  'node-status-update-frequency'?: string
  'relist-period': string
  v: number
}

/** `A=true,B=false` → {A: true, B: false}; a gate nobody knows is refused with pflag's words, as by the kubelet. */
export function parseGates(text: string): Record<string, boolean> {
  const gates: Record<string, boolean> = {}
  for (const part of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const match = /^([A-Za-z0-9]+)=(true|false)$/i.exec(part)
    if (!match) throw new Error(`--feature-gates: "${part}" is not Name=true|false`)
    if (!Object.hasOwn(FEATURES, match[1])) throw new Error(`invalid argument "${text}" for "--feature-gates" flag: unrecognized feature gate: ${match[1]}`)
    gates[match[1]] = match[2].toLowerCase() === 'true'
  }
  return gates
}

/** `key=value,...` → map. */
export function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {}
  for (const part of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const at = part.indexOf('=')
    if (at <= 0) throw new Error(`--node-labels: "${part}" is not key=value`)
    labels[part.slice(0, at)] = part.slice(at + 1)
  }
  return labels
}

/** `key=value:Effect,key:Effect` → taints. */
export function parseTaints(text: string): AnyObject[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((part) => {
      const match = /^([^=:]+)(?:=([^:]*))?:(NoSchedule|PreferNoSchedule|NoExecute)$/.exec(part)
      if (!match) throw new Error(`--register-with-taints: "${part}" is not key[=value]:NoSchedule|PreferNoSchedule|NoExecute`)
      return match[2] === undefined ? {key: match[1], effect: match[3]} : {key: match[1], value: match[2], effect: match[3]}
    })
}

/** What the flags set, in the configuration's own shape (flags win over files, as in Kubernetes). */
function flagOverrides(flags: AgentFlags): AnyObject {
  const overrides: AnyObject = {}
  if (flags.address !== undefined) overrides.address = flags.address
  if (flags.port !== undefined) overrides.port = flags.port
  if (flags['container-runtime-endpoint'] !== undefined) overrides.containerRuntimeEndpoint = flags['container-runtime-endpoint']
  if (flags['image-service-endpoint'] !== undefined) overrides.imageServiceEndpoint = flags['image-service-endpoint']
  if (flags['pod-manifest-path'] !== undefined) overrides.staticPodPath = flags['pod-manifest-path']
  if (flags['feature-gates'] !== undefined) overrides.featureGates = parseGates(flags['feature-gates'])
  if (flags['node-labels'] !== undefined) overrides.nodeLabels = parseLabels(flags['node-labels'])
  if (flags['register-with-taints'] !== undefined) overrides.registerWithTaints = parseTaints(flags['register-with-taints'])
  if (flags['fail-swap-on'] !== undefined) overrides.failSwapOn = flags['fail-swap-on']
  if (flags['max-pods'] !== undefined) overrides.maxPods = flags['max-pods']
  if (flags['node-status-update-frequency'] !== undefined) overrides.nodeStatusUpdateFrequency = flags['node-status-update-frequency']
  return overrides
}

/** Settings from a loaded configuration (loadAgentConfiguration fills every default) and the flags. */
export function settingsFrom(config: AgentConfiguration, flags: AgentFlags, version: string): AgentSettings {
  const rootDir = resolve(flags['root-dir'])
  const nodeName = (flags['hostname-override'] ?? hostname()).toLowerCase()
  const endpoint = flags.runtime === 'process' ? '' : config.containerRuntimeEndpoint
  if (flags.runtime === 'cri' && endpoint === '') throw new Error('--runtime=cri needs containerRuntimeEndpoint (or --container-runtime-endpoint)')
  return {
    nodeName,
    hostnameAddress: nodeName,
    rootDir,
    certDir: resolve(flags['cert-dir'] ?? join(rootDir, 'pki')),
    lockFile: flags['lock-file'] ? resolve(flags['lock-file']) : undefined,
    kubeconfig: flags.kubeconfig ? resolve(flags.kubeconfig) : undefined,
    bootstrapKubeconfig: flags['bootstrap-kubeconfig'] ? resolve(flags['bootstrap-kubeconfig']) : undefined,
    address: config.address,
    port: config.port,
    enableServer: config.enableServer,
    clientCAFile: config.authentication.x509.clientCAFile || undefined,
    authorizationMode: config.authorization.mode,
    cacheAuthorizedTTLMs: parseDuration(config.authorization.webhook.cacheAuthorizedTTL),
    cacheUnauthorizedTTLMs: parseDuration(config.authorization.webhook.cacheUnauthorizedTTL),
    authenticationCacheTTLMs: parseDuration(config.authentication.webhook.cacheTTL),
    tlsCertFile: config.tlsCertFile || undefined,
    tlsPrivateKeyFile: config.tlsPrivateKeyFile || undefined,
    rotateCertificates: config.rotateCertificates,
    serverTLSBootstrap: config.serverTLSBootstrap,
    staticPodPath: config.staticPodPath || undefined,
    fileCheckFrequencyMs: parseDuration(config.fileCheckFrequency),
    containerRuntimeEndpoint: endpoint,
    imageServiceEndpoint: config.imageServiceEndpoint,
    runtimeRequestTimeoutMs: parseDuration(config.runtimeRequestTimeout),
    processRuntimeImages: flags['process-runtime-images'],
    featureGates: config.featureGates,
    nodeStatusUpdateFrequencyMs: parseDuration(config.nodeStatusUpdateFrequency),
    nodeStatusReportFrequencyMs: parseDuration(config.nodeStatusReportFrequency),
    nodeLeaseDurationSeconds: config.nodeLeaseDurationSeconds,
    maxPods: config.maxPods,
    nodeLabels: config.nodeLabels,
    registerNode: config.registerNode,
    registerWithTaints: config.registerWithTaints,
    providerID: config.providerID || undefined,
    failSwapOn: config.failSwapOn,
    swapBehavior: config.memorySwap.swapBehavior,
    seccompDefault: config.seccompDefault,
    serializeImagePulls: config.serializeImagePulls,
    syncFrequencyMs: parseDuration(config.syncFrequency),
    clusterDNS: config.clusterDNS,
    clusterDomain: config.clusterDomain,
    containerLogMaxSizeBytes: quantityBytes(config.containerLogMaxSize),
    containerLogMaxFiles: config.containerLogMaxFiles,
    containerLogMaxWorkers: config.containerLogMaxWorkers,
    containerLogMonitorIntervalMs: parseDuration(config.containerLogMonitorInterval),
    relistPeriodMs: parseDuration(flags['relist-period']),
    agentVersion: `v${version}`,
  }
}

export async function runAgentCommand(flags: AgentFlags, version: string): Promise<void> {
  let settings: AgentSettings
  try {
    const {config} = loadAgentConfiguration({configFile: flags.config, configDir: flags['config-dir']})
    // flags over the defaulted files, then the checks (as the kubelet's kubeletConfigFlagPrecedence and
    // ValidateKubeletConfiguration): a flag's 0s is not defaulted, it is refused
    const merged = applyFlagOverrides(config, flagOverrides(flags))
    validateAgentConfiguration(merged)
    if (flags['print-config']) {
      process.stdout.write(printAgentConfiguration(merged))
      return
    }
    settings = settingsFrom(merged, flags, version)
  } catch (error) {
    fail((error as Error).message)
  }
  const logger = createLogger({verbosity: flags.v})
  const agent = new Agent(settings, logger)
  try {
    await agent.start()
  } catch (error) {
    fail(`agent cannot start: ${(error as Error).message}`)
  }
  await new Promise<void>((resolveStop) => {
    let stopping = false
    const stop = (signal: string): void => {
      if (stopping) return
      stopping = true
      logger.info('stopping', {signal})
      void agent.stop().finally(resolveStop)
    }
    process.once('SIGINT', () => stop('SIGINT'))
    process.once('SIGTERM', () => stop('SIGTERM'))
  })
}
