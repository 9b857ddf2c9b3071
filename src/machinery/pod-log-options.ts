// PodLogOptions, the query of pods/log, decoded and validated once for the API server (which answers
// Kubernetes' 400 and 422 Statuses) and the agent's `/containerLogs` (which answers the kubelet's
// plain errors), and the query the server passes on to the agent.
import type {FieldError} from './field-errors.js'
import {errors} from './status.js'

export interface PodLogOptions {
  container?: string
  follow?: boolean
  previous?: boolean
  timestamps?: boolean
  sinceSeconds?: number
  sinceTime?: string
  tailLines?: number
  limitBytes?: number
  insecureSkipTLSVerifyBackend?: boolean
}

const TRUE = new Set(['1', 't', 'T', 'true', 'TRUE', 'True'])
const FALSE = new Set(['0', 'f', 'F', 'false', 'FALSE', 'False'])
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/

/** The query's PodLogOptions as the parameter codec decodes them (Go's strconv messages on a bad value, 400). */
export function decodePodLogOptions(query: URLSearchParams): PodLogOptions {
  const options: PodLogOptions = {}
  const text = (name: string): string | undefined => {
    const value = query.get(name)
    return value === null || value === '' ? undefined : value
  }
  for (const name of ['follow', 'previous', 'timestamps', 'insecureSkipTLSVerifyBackend'] as const) {
    const value = text(name)
    if (value === undefined) continue
    if (!TRUE.has(value) && !FALSE.has(value)) throw errors.badRequest(`strconv.ParseBool: parsing ${JSON.stringify(value)}: invalid syntax`)
    options[name] = TRUE.has(value)
  }
  for (const name of ['sinceSeconds', 'tailLines', 'limitBytes'] as const) {
    const value = text(name)
    if (value === undefined) continue
    if (!/^[+-]?\d+$/.test(value)) throw errors.badRequest(`strconv.ParseInt: parsing ${JSON.stringify(value)}: invalid syntax`)
    options[name] = Number(value)
  }
  const sinceTime = text('sinceTime')
  if (sinceTime !== undefined) {
    if (!RFC3339.test(sinceTime) || Number.isNaN(Date.parse(sinceTime))) {
      throw errors.badRequest(`parsing time ${JSON.stringify(sinceTime)} as "2006-01-02T15:04:05Z07:00": cannot parse ${JSON.stringify(sinceTime)} as "2006"`)
    }
    options.sinceTime = sinceTime
  }
  const container = text('container')
  if (container !== undefined) options.container = container
  return options
}

/** Kubernetes' ValidatePodLogOptions. */
export function validatePodLogOptions(options: PodLogOptions): FieldError[] {
  const errs: FieldError[] = []
  if (options.tailLines !== undefined && options.tailLines < 0) {
    errs.push({type: 'FieldValueInvalid', field: 'tailLines', value: options.tailLines, message: 'must be greater than or equal to 0'})
  }
  if (options.limitBytes !== undefined && options.limitBytes < 1) {
    errs.push({type: 'FieldValueInvalid', field: 'limitBytes', value: options.limitBytes, message: 'must be greater than 0'})
  }
  if (options.sinceSeconds !== undefined && options.sinceTime !== undefined) {
    errs.push({type: 'FieldValueForbidden', field: '', message: 'at most one of `sinceTime` or `sinceSeconds` may be specified'})
  } else if (options.sinceSeconds !== undefined && options.sinceSeconds < 1) {
    errs.push({type: 'FieldValueInvalid', field: 'sinceSeconds', value: options.sinceSeconds, message: 'must be greater than 0'})
  }
  return errs
}

/** The agent's query: the options LogLocation passes on. */
export function agentLogQuery(options: PodLogOptions): string {
  const params = new URLSearchParams()
  if (options.follow) params.set('follow', 'true')
  if (options.previous) params.set('previous', 'true')
  if (options.timestamps) params.set('timestamps', 'true')
  if (options.sinceSeconds !== undefined) params.set('sinceSeconds', String(options.sinceSeconds))
  // Go formats metav1.Time with RFC3339 (seconds, UTC as stored)
  if (options.sinceTime !== undefined) params.set('sinceTime', new Date(options.sinceTime).toISOString().replace(/\.\d{3}Z$/, 'Z'))
  if (options.tailLines !== undefined) params.set('tailLines', String(options.tailLines))
  if (options.limitBytes !== undefined) params.set('limitBytes', String(options.limitBytes))
  const query = params.toString()
  return query ? `?${query}` : ''
}
