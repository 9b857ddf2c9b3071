// ConfigMap (v1): Kubernetes' ValidateConfigMap / ValidateConfigMapUpdate, document 2.
//   - keys of data and binaryData are config keys (`[-._a-zA-Z0-9]+`, not `.`/`..`/`..*`, ≤ 253);
//   - a key may not be in both maps: `data[k]: Invalid value: "k": duplicate of key present in binaryData`;
//   - data values plus binaryData bytes total at most 1 MiB: `: Too long: may not be more than 1048576 bytes`
//     (the empty path: the error is about the whole object, as in Kubernetes);
//   - once `immutable: true` is stored, data and binaryData cannot change and immutable cannot be unset.
// Non-UTF-8 text can only reach `data` as a JSON string with an unpaired surrogate escape (`"\ud800"`);
// Go's decoder would have turned it into U+FFFD, ours keeps it, so it is refused here: such bytes
// belong in binaryData (document 2).
import type {AnyObject, FieldError} from '../../api/types.js'
import {byteLength, forbidden, invalid, tooLong} from '../../machinery/field-errors.js'
import {isConfigMapKey} from '../../machinery/validation.js'
import {obj, semanticEqual, type KindValidator} from './common.js'

/** core.MaxSecretSize, which also bounds a ConfigMap's data: 1 MiB. */
export const MAX_CONFIGMAP_SIZE = 1024 * 1024

const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** The length in bytes of a binaryData value: base64 text in JSON, raw bytes from other decoders. */
function binaryLength(value: unknown): number {
  if (typeof value === 'string') return Buffer.from(value, 'base64').length
  if (value instanceof Uint8Array) return value.length
  return 0
}

export function validateConfigMap(cm: AnyObject): FieldError[] {
  const errs: FieldError[] = []
  const data = obj(cm.data)
  const binaryData = obj(cm.binaryData)
  let total = 0
  for (const [key, value] of Object.entries(data)) {
    const path = `data[${key}]`
    for (const msg of isConfigMapKey(key)) errs.push(invalid(path, key, msg))
    if (Object.hasOwn(binaryData, key)) errs.push(invalid(path, key, 'duplicate of key present in binaryData'))
    const text = typeof value === 'string' ? value : ''
    if (loneSurrogate.test(text)) errs.push(invalid(path, key, 'must be valid UTF-8; values with non-UTF-8 bytes must go in binaryData'))
    total += byteLength(text)
  }
  for (const [key, value] of Object.entries(binaryData)) {
    for (const msg of isConfigMapKey(key)) errs.push(invalid(`binaryData[${key}]`, key, msg))
    total += binaryLength(value)
  }
  if (total > MAX_CONFIGMAP_SIZE) errs.push(tooLong('', '', MAX_CONFIGMAP_SIZE))
  return errs
}

export function validateConfigMapUpdate(cm: AnyObject, old: AnyObject): FieldError[] {
  const errs: FieldError[] = []
  if (old.immutable === true) {
    const message = 'field is immutable when `immutable` is set'
    if (cm.immutable !== true) errs.push(forbidden('immutable', message))
    if (!semanticEqual(cm.data, old.data)) errs.push(forbidden('data', message))
    if (!semanticEqual(cm.binaryData, old.binaryData)) errs.push(forbidden('binaryData', message))
  }
  return [...errs, ...validateConfigMap(cm)]
}

export const configMapValidator: KindValidator = {
  create: (object) => validateConfigMap(object),
  update: (object, old) => validateConfigMapUpdate(object, old),
}
