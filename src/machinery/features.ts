// Feature gates named by the seeds, with their stage: alpha is off by default, beta and stable on.

export type FeatureStage = 'alpha' | 'beta' | 'stable'

export interface FeatureSpec {
  stage: FeatureStage
  /** what the gate turns on, for --help and errors */
  description: string
}

export const FEATURES = {
  APIResponseCompression: {stage: 'beta', description: 'gzip for get and list responses when the client accepts it'},
  CBORServingAndStorage: {stage: 'alpha', description: 'application/cbor requests and responses'},
  WatchList: {stage: 'beta', description: 'watch with sendInitialEvents=true'},
  ConsistentListFromCache: {stage: 'beta', description: 'lists at the current revision served from the watch cache once it has caught up'},
  ContainerCheckpoint: {stage: 'beta', description: "the agent's checkpoint endpoint"},
  InPlacePodVerticalScaling: {stage: 'stable', description: 'pod resource state files on the agent'},
  MaxUnavailableStatefulSet: {stage: 'beta', description: 'StatefulSet rollingUpdate.maxUnavailable'},
  PodsAPI: {stage: 'alpha', description: "the agent's pod-info gRPC socket"},
  GracefulNodeShutdown: {stage: 'beta', description: 'graceful node shutdown state on the agent'},
  SystemdWatchdog: {stage: 'beta', description: 'init-system watchdog keep-alives from the agent'},
  NodeDeclaredFeatures: {stage: 'beta', description: 'Node status.declaredFeatures'},
  KubeletEnsureSecretPulledImages: {stage: 'beta', description: 'image pull records on the agent'},
} as const satisfies Record<string, FeatureSpec>

export type FeatureName = keyof typeof FEATURES
export type FeatureGates = Record<FeatureName, boolean>

export class FeatureGateError extends Error {}

export function defaultGates(): FeatureGates {
  const gates = {} as FeatureGates
  for (const [name, spec] of Object.entries(FEATURES) as [FeatureName, FeatureSpec][]) gates[name] = spec.stage !== 'alpha'
  return gates
}

/** Parses `A=true,B=false` (the --feature-gates flag) over the defaults. Unknown names are an error. */
export function parseFeatureGates(text: string, base: FeatureGates = defaultGates()): FeatureGates {
  const gates = {...base}
  for (const part of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const [name, value = ''] = part.split('=').map((s) => s.trim())
    if (!(name in FEATURES)) {
      throw new FeatureGateError(`unrecognized feature gate: ${name} (known: ${Object.keys(FEATURES).sort().join(', ')})`)
    }
    if (value !== 'true' && value !== 'false') {
      throw new FeatureGateError(`invalid value of ${name}: ${value}, err: must be true or false`)
    }
    gates[name as FeatureName] = value === 'true'
  }
  return gates
}
