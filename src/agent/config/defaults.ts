// What the kubelet does to its configuration besides merging it, for the fields orch has:
//  - SetDefaults_KubeletConfiguration (v1beta1), run when the main file is decoded: a duration it
//    defaults with `== zeroDuration` is unset when it is `0s` and takes its default;
//    nodeStatusReportFrequency, when unset, is nodeStatusUpdateFrequency if that is set, else 5m.
//    Drop-ins and flags are applied after this, without defaulting again (as the kubelet's
//    mergeKubeletConfigurations and kubeletConfigFlagPrecedence do), so a `0s` from them stays.
//  - the checks made once everything is merged: feature gates must be known (the kubelet's
//    DefaultMutableFeatureGate.SetFromMap, before its validation), and the durations orch runs loops or
//    deadlines with must be positive (a `0s` from a drop-in or a flag would be a busy loop or a CRI deadline that always
//    expires).
import {parseDuration} from '../../machinery/duration.js'
import {FEATURES} from '../../machinery/features.js'

type Plain = Record<string, unknown>

const isPlain = (value: unknown): value is Plain => typeof value === 'object' && value !== null && !Array.isArray(value)

/** The durations SetDefaults_KubeletConfiguration defaults when zero (besides nodeStatusReportFrequency). */
export const ZERO_DEFAULTED_DURATIONS = [
  'syncFrequency',
  'fileCheckFrequency',
  'authentication.webhook.cacheTTL',
  'authorization.webhook.cacheAuthorizedTTL',
  'authorization.webhook.cacheUnauthorizedTTL',
  'nodeStatusUpdateFrequency',
  'runtimeRequestTimeout',
] as const

/** The durations that must be greater than 0 once merged, with the orch flag that sets each (if any). */
export const POSITIVE_DURATIONS: Record<string, string | undefined> = {
  syncFrequency: undefined,
  fileCheckFrequency: undefined,
  nodeStatusUpdateFrequency: '--node-status-update-frequency',
  nodeStatusReportFrequency: undefined,
  runtimeRequestTimeout: undefined,
}

const isZero = (value: unknown): boolean => typeof value === 'string' && parseDuration(value) === 0

/** The main file's document with the kubelet's zero-duration defaulting applied (a new object). */
export function defaultZeroDurations(document: Plain): Plain {
  const out = structuredClone(document)
  const report = out.nodeStatusReportFrequency
  if (report === undefined || isZero(report)) {
    // before nodeStatusUpdateFrequency is itself defaulted, as in the kubelet
    const update = out.nodeStatusUpdateFrequency
    if (update !== undefined && !isZero(update)) out.nodeStatusReportFrequency = update
    else delete out.nodeStatusReportFrequency
  }
  for (const path of ZERO_DEFAULTED_DURATIONS) {
    const parts = path.split('.')
    let parent: unknown = out
    for (const part of parts.slice(0, -1)) parent = isPlain(parent) ? parent[part] : undefined
    const last = parts[parts.length - 1]
    if (isPlain(parent) && isZero(parent[last])) delete parent[last]
  }
  return out
}

/** The first gate (in name order) no component knows, or undefined: the kubelet's `unrecognized feature gate`. */
export function unknownFeatureGate(gates: Record<string, unknown> | undefined): string | undefined {
  return Object.keys(gates ?? {})
    .sort()
    .find((name) => !Object.hasOwn(FEATURES, name))
}

/** The kubelet-style `invalid configuration: ...` messages for a merged configuration (empty: valid). */
export function validationErrors(config: Plain): string[] {
  const errors: string[] = []
  for (const [field, flag] of Object.entries(POSITIVE_DURATIONS)) {
    const value = config[field]
    if (typeof value === 'string' && parseDuration(value) <= 0) errors.push(`invalid configuration: ${field}${flag ? ` (${flag})` : ''} ${value} must be greater than 0`)
  }
  return errors
}
