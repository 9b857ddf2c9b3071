// Label and field selectors of a list or watch, checked against what the kind supports.
import type {AnyObject, KindDeclaration} from '../api/types.js'
import {parseFieldSelector, type FieldSelector} from '../machinery/fields.js'
import {parseLabelSelector, type LabelSelector, SelectorParseError} from '../machinery/labels.js'
import {errors} from '../machinery/status.js'

export interface Selectors {
  readonly empty: boolean
  matches(object: AnyObject): boolean
}

export function fieldsOf(declaration: KindDeclaration, object: AnyObject): Record<string, string> {
  const fields: Record<string, string> = {'metadata.name': object.metadata?.name ?? ''}
  if (declaration.namespaced) fields['metadata.namespace'] = object.metadata?.namespace ?? ''
  for (const [label, read] of Object.entries(declaration.fieldSelectors ?? {})) fields[label] = read(object)
  return fields
}

export function compileSelectors(
  declaration: KindDeclaration,
  params: {labelSelector?: string; fieldSelector?: string},
): Selectors {
  let labels: LabelSelector | undefined
  let fields: FieldSelector | undefined
  try {
    if (params.labelSelector) labels = parseLabelSelector(params.labelSelector)
  } catch (error) {
    if (error instanceof SelectorParseError) throw errors.badRequest(`unable to parse requirement: ${error.message}`)
    throw error
  }
  try {
    if (params.fieldSelector) fields = parseFieldSelector(params.fieldSelector)
  } catch (error) {
    if (error instanceof SelectorParseError) throw errors.badRequest(`invalid field selector: ${error.message}`)
    throw error
  }
  if (fields) {
    const supported = ['metadata.name', ...(declaration.namespaced ? ['metadata.namespace'] : []), ...Object.keys(declaration.fieldSelectors ?? {})]
    for (const requirement of fields.requirements) {
      if (!supported.includes(requirement.field)) {
        throw errors.badRequest(
          `field label not supported: ${requirement.field}`,
        )
      }
    }
  }
  const labelEmpty = !labels || labels.isEmpty()
  const fieldEmpty = !fields || fields.isEmpty()
  return {
    empty: labelEmpty && fieldEmpty,
    matches(object) {
      if (!labelEmpty && !labels!.matches(object.metadata?.labels ?? {})) return false
      if (!fieldEmpty && !fields!.matches(fieldsOf(declaration, object))) return false
      return true
    },
  }
}
