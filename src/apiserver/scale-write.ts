// Writes to the scale subresource: PUT of an autoscaling/v1 Scale, its JSON, merge and strategic merge
// patches, and server-side apply of a Scale — each turned into the parent's spec.replicas, admitted as
// the Scale it writes, with the parent's managedFields kept as Kubernetes' ScaleHandler keeps them.
import type {IncomingMessage} from 'node:http'
import type {AnyObject, RequestContext} from '../api/types.js'
import {apply, applyConflictError} from '../machinery/apply.js'
import {scanJsonText, pruneUnknownFields} from '../machinery/field-validation.js'
import {assertDecodes, assertPatchedDecodes, decodeFailure} from '../machinery/go-json.js'
import {assertStrategicPatchConverts} from '../machinery/go-converter.js'
import {mediaTypeOf} from '../machinery/negotiation.js'
import {applyJsonPatch, applyMergePatch} from '../machinery/patch.js'
import {scaleSchema} from '../machinery/protobuf-schemas.js'
import {errors} from '../machinery/status.js'
import {strategicMergePatch} from '../machinery/strategic.js'
import {yamlDuplicateKeys} from '../machinery/yaml-duplicates.js'
import {decodeBody, isJsonBody, JSON_PATCH, patchNumbersOf, readBody, STRATEGIC_PATCH} from './codec.js'
import {checkApplyRequest} from './apply.js'
import {assertBodyObject, checkName, type ResourceRegistry} from './registry.js'
import {checkResourceVersion, checkScaleUid, checkUidPrecondition} from './registry-update.js'
import type {ResourceRequest} from './requestinfo.js'
import {parentManagedFields, replicasFromScale, SCALE_API_VERSION, SCALE_KIND, scaleManagedFields, toScale} from './scale.js'
import type {Serializer, SerializerSet} from './serializers.js'
import {checkPatchedFields, jsonPatchProblems, reportApplyYamlProblems, reportStrictProblems, typedBodyProblems} from './strict-decoding.js'
import {fieldValidationParam, validateWriteOptions} from './write-options.js'

export interface ScaleWrite {
  verb: 'update' | 'patch'
  dryRun: boolean
  context: RequestContext
  query: URLSearchParams
  /** the request's warnings, added to as the body is checked */
  warnings: string[]
  /** how each patch media type is decoded; `applyTypes` are the server-side apply ones among them */
  patchDecoders: Map<string, Serializer>
  applyTypes: ReadonlySet<string>
  serializers: SerializerSet
  /** a server-side apply's field manager and ?force, read as for the object's own applies */
  apply: {fieldManager: string; force: boolean}
}

/** Serves a PUT or PATCH of /scale; answers the parent as stored. */
export async function writeScale(request: IncomingMessage, registry: ResourceRegistry, info: ResourceRequest, write: ScaleWrite): Promise<AnyObject> {
  const {verb, query, warnings} = write
  const contentType = mediaTypeOf(request.headers['content-type'])
  const decoder = verb === 'patch' ? write.patchDecoders.get(contentType) : undefined
  if (verb === 'patch' && !decoder) throw errors.unsupportedMediaType(contentType, [...write.patchDecoders.keys()])
  if (verb === 'patch') validateWriteOptions('patch', query, contentType)
  const raw = await readBody(request)
  if (verb === 'update') validateWriteOptions('update', query)
  const body = decoder ? decodeBody(raw, contentType, {all: [decoder], byMediaType: () => decoder}) : decodeBody(raw, request.headers['content-type'], write.serializers)
  // fieldValidation as for the parent's own writes
  const validation = fieldValidationParam(query)
  if (verb === 'patch' && write.applyTypes.has(contentType)) {
    const yamlProblems = validation !== 'Ignore' && contentType.endsWith('+yaml') ? yamlDuplicateKeys(raw.toString('utf8')) : []
    return applyScale(registry, info, assertBodyObject(body), write, () => reportApplyYamlProblems(yamlProblems, validation, warnings))
  }
  const strict = {validation, problems: {decoding: [] as string[], yaml: [] as string[]}, warnings}
  const text = raw.toString('utf8')
  // a Scale is decoded as Kubernetes decodes it: spec.replicas an int32 (400; a patch's result: 422)
  if (verb === 'update' && typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const scan = isJsonBody(request.headers['content-type']) ? scanJsonText(text) : undefined
    assertDecodes(body as AnyObject, scaleSchema, SCALE_KIND, raw, scan?.numberLiterals)
    const unknown = pruneUnknownFields(body, scaleSchema)
    if (validation !== 'Ignore') {
      reportStrictProblems({decoding: typedBodyProblems(text, unknown, scan), yaml: []}, validation, warnings, (message) => decodeFailure(body as AnyObject, SCALE_KIND, raw, message))
    }
  } else if (verb === 'patch' && validation !== 'Ignore') {
    strict.problems.decoding = contentType === JSON_PATCH ? jsonPatchProblems(text, body) : scanJsonText(text).duplicates.map((path) => `duplicate field "${path}"`)
  }
  const warningsBefore = warnings.length
  const patchNumbers = verb === 'patch' ? patchNumbersOf(contentType, body, raw) : []
  return registry.guaranteedUpdate(
    info.namespace,
    info.name,
    (current) => {
      const scale = toScale(current)
      let wanted: AnyObject
      if (verb === 'update') {
        wanted = assertBodyObject(body)
        // the Scale names the object of the URL, as any update's body must
        checkName(wanted, info.name, info.namespace)
        // a PUT's uid is the storage's precondition, checked before the Scale is looked at
        checkUidPrecondition(registry.groupResource, registry.key(info.namespace, info.name), info.name, wanted.metadata?.uid, current)
      } else if (contentType === JSON_PATCH) {
        wanted = assertBodyObject(applyJsonPatch(scale, body))
      } else if (contentType === STRATEGIC_PATCH) {
        wanted = assertBodyObject(strategicMergePatch(scale, body, scaleSchema))
      } else {
        // merge-style patches of a Scale touch spec.replicas only
        wanted = assertBodyObject(applyMergePatch(scale, body))
      }
      if (contentType === STRATEGIC_PATCH) assertStrategicPatchConverts(wanted, body, scaleSchema, patchNumbers)
      if (verb === 'patch') {
        assertPatchedDecodes(wanted, scaleSchema, 'v1', contentType === STRATEGIC_PATCH ? [] : patchNumbers)
        checkPatchedFields(contentType, body, wanted, scaleSchema, patchNumbers, strict, warningsBefore)
      }
      const replicas = replicasFromScale(wanted, info.name)
      checkScalePreconditions(registry, info.name, wanted, current)
      return registry.prepareUpdate(current, {...current, spec: {...current.spec, replicas}}, '', {
        dryRun: write.dryRun,
        context: write.context,
        fieldManager: write.context.fieldManager,
        managedSubresource: 'scale',
      })
    },
    {dryRun: write.dryRun, admit: {context: write.context, subresource: 'scale'}},
  )
}

/**
 * Server-side apply of a Scale, as Kubernetes' scale REST does it: the configuration is applied to
 * the current Scale carrying the managers of the parent's `.spec.replicas` (so another manager's
 * replicas conflict unless forced), its replicas become the parent's, and the Scale's managedFields
 * are folded back into the parent's. A Scale is never created by apply: an absent parent is 404.
 */
async function applyScale(registry: ResourceRegistry, info: ResourceRequest, config: AnyObject, write: ScaleWrite, afterApply: () => void): Promise<AnyObject> {
  const {fieldManager, force} = write.apply
  checkApplyRequest(config, info, fieldManager)
  let warnedOnce = false
  return registry.guaranteedUpdate(
    info.namespace,
    info.name,
    (current) => {
      const scale = toScale(current)
      scale.metadata!.managedFields = scaleManagedFields(current.metadata?.managedFields)
      const result = apply(scale, {...config, metadata: {...(config.metadata ?? {}), name: info.name}}, scaleSchema, fieldManager, {
        now: write.context.now,
        apiVersion: SCALE_API_VERSION,
        kind: SCALE_KIND.kind,
        force,
        subresource: 'scale',
        ignoredFields: [['status']],
      })
      if (result.conflicts) throw applyConflictError(result.conflicts)
      if (!warnedOnce) afterApply()
      warnedOnce = true
      const replicas = replicasFromScale(result.object, info.name)
      checkScalePreconditions(registry, info.name, config, current)
      const managedFields = parentManagedFields(current.metadata?.managedFields, result.managedFields, registry.apiVersion)
      const metadata = {...current.metadata}
      if (managedFields.length > 0) metadata.managedFields = managedFields
      else delete metadata.managedFields
      return registry.prepareUpdate(current, {...current, metadata, spec: {...current.spec, replicas}}, '', {
        dryRun: write.dryRun,
        context: write.context,
        managedFieldsDone: true,
      })
    },
    {dryRun: write.dryRun, admit: {context: write.context, subresource: 'scale'}},
  )
}

/**
 * What the written Scale names of its parent, as Kubernetes' scaleUpdatedObjectInfo checks it once the
 * Scale validates: its uid, then its resourceVersion, which becomes the parent's and so is Store.Update's
 * optimistic lock (409 on the parent's resource). A Scale without one is written unconditionally.
 */
function checkScalePreconditions(registry: ResourceRegistry, name: string, scale: AnyObject, current: AnyObject): void {
  checkScaleUid(registry.groupResource, name, scale.metadata?.uid, current)
  checkResourceVersion(registry.groupResource, name, scale.metadata?.resourceVersion, current)
}
