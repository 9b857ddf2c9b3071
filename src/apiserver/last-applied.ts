// Kubernetes' lastAppliedUpdater (k8s.io/apimachinery/pkg/util/managedfields/internal/lastappliedupdater.go):
// a server-side apply by the field manager `kubectl` keeps the client-side apply annotation
// kubectl.kubernetes.io/last-applied-configuration in step with what it applied, when the object has
// that annotation, so that going back to client-side apply (kubectl's documented downgrade) prunes
// from the latest configuration, not from the one before the server-side applies.
import type {AnyObject} from '../api/types.js'
import {byteLength} from '../machinery/field-errors.js'
import {TotalAnnotationSizeLimitB} from '../machinery/validation.js'
import {goJSON} from '../machinery/field-path.js'

/** Kubernetes' annotation key: kubectl writes and reads it by this name, so it is not renamed */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration'
const KUBECTL_MANAGER = 'kubectl'

/** buildLastApplied: the applied configuration without the annotation itself, as
 *  runtime.Encode(unstructured.UnstructuredJSONScheme, …) writes it (json.Encoder: a trailing newline). */
function lastAppliedOf(configuration: AnyObject): string {
  const metadata: AnyObject = {...(configuration.metadata ?? {})}
  if (metadata.annotations && typeof metadata.annotations === 'object') {
    const annotations: AnyObject = {...metadata.annotations}
    delete annotations[LAST_APPLIED_ANNOTATION]
    metadata.annotations = annotations
  }
  return goJSON({...configuration, metadata}) + '\n'
}

/** After an apply by `kubectl`: the result's last-applied annotation, when it has one, becomes the
 *  configuration just applied; left out when that makes the annotations too large (setLastApplied). */
export function updateLastApplied(result: AnyObject, configuration: AnyObject, manager: string): void {
  const annotations = result.metadata?.annotations
  if (manager !== KUBECTL_MANAGER || !annotations || typeof annotations[LAST_APPLIED_ANNOTATION] !== 'string') return
  const updated: AnyObject = {...annotations, [LAST_APPLIED_ANNOTATION]: lastAppliedOf(configuration)}
  let total = 0
  for (const [key, value] of Object.entries(updated)) total += byteLength(key) + byteLength(String(value))
  if (total > TotalAnnotationSizeLimitB) delete updated[LAST_APPLIED_ANNOTATION]
  result.metadata = {...result.metadata, annotations: updated}
}
