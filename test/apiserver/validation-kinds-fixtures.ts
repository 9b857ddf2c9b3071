// Shared fixtures of the kind-validator tests (validation-kinds*.test.ts): objects defaulted as the
// registry defaults them before validation, and helpers returning errors as Kubernetes prints them.
import assert from 'node:assert/strict'
import type {AnyObject, FieldError, RequestContext} from '../../src/api/types.js'
import {statefulSet as statefulSetDeclaration} from '../../src/api/apps/statefulset.js'
import {pod as podDeclaration} from '../../src/api/core/pod.js'
import {formatFieldError} from '../../src/machinery/field-errors.js'
import {kindValidators} from '../../src/apiserver/validation/index.js'

export const now = new Date('2025-01-01T00:00:00Z')

export function validator(key: string) {
  const v = kindValidators.get(key)
  assert.ok(v, `no validator for ${key}`)
  return v
}

export function create(key: string, object: AnyObject): string[] {
  return validator(key).create!(object, {now}).map(formatFieldError)
}

export function update(key: string, object: AnyObject, old: AnyObject, subresource?: string): string[] {
  const context: RequestContext = subresource ? {now, subresource} : {now}
  return validator(key).update!(object, old, context).map(formatFieldError)
}

export function errorsOf(key: string, object: AnyObject): FieldError[] {
  return validator(key).create!(object, {now})
}

/** The error list holds this exact text. */
export function has(errors: string[], text: string): void {
  assert.ok(errors.includes(text), `expected ${JSON.stringify(text)} among ${JSON.stringify(errors, null, 1)}`)
}

export function none(errors: string[]): void {
  assert.deepEqual(errors, [])
}

export const clone = <T>(v: T): T => structuredClone(v)

export function podSpec(): AnyObject {
  return {containers: [{name: 'app', image: 'nginx:1.27', ports: [{containerPort: 80}]}]}
}

export function makePod(spec: AnyObject = podSpec()): AnyObject {
  const p: AnyObject = {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'p', namespace: 'default'}, spec}
  podDeclaration.defaults!(p)
  return p
}

export function makeStatefulSet(mutate: (spec: AnyObject) => void = () => {}): AnyObject {
  const spec: AnyObject = {
    serviceName: 'web',
    selector: {matchLabels: {app: 'web'}},
    template: {
      metadata: {labels: {app: 'web'}},
      spec: {containers: [{name: 'nginx', image: 'nginx:1.27', ports: [{containerPort: 80, name: 'web'}], volumeMounts: [{name: 'www', mountPath: '/usr/share/nginx/html'}]}]},
    },
    volumeClaimTemplates: [{metadata: {name: 'www'}, spec: {accessModes: ['ReadWriteOnce'], resources: {requests: {storage: '1Gi'}}}}],
  }
  mutate(spec)
  const sts: AnyObject = {apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: {name: 'web', namespace: 'default'}, spec}
  statefulSetDeclaration.defaults!(sts)
  return sts
}

export const makeNode = (spec: AnyObject = {}, status: AnyObject = {}): AnyObject => ({apiVersion: 'v1', kind: 'Node', metadata: {name: 'n1'}, spec, status})

export const configMap = (fields: AnyObject): AnyObject => ({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'cm', namespace: 'default'}, ...fields})

export const serviceCIDR = (cidrs?: unknown): AnyObject => ({metadata: {name: 'kubernetes'}, spec: cidrs === undefined ? {} : {cidrs}})

export const svm = (resource: AnyObject): AnyObject => ({metadata: {name: 'm'}, spec: {resource}})

export const S = 'apps/StatefulSet'
