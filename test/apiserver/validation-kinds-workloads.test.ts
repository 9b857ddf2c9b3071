// The kind validators of src/apiserver/validation for workloads: StatefulSet (document 2) and the
// basic Pod rules a scheduler and an agent rely on, each asserting Kubernetes' field path and message.
import {describe, it} from 'node:test'
import assert from 'node:assert/strict'
import type {AnyObject} from '../../src/api/types.js'
import {POD_UPDATE_FORBIDDEN_PREFIX} from '../../src/apiserver/validation/pod.js'
import {clone, create, has, makePod, makeStatefulSet, none, podSpec, S, update} from './validation-kinds-fixtures.js'

// ---------- StatefulSet ----------

describe('StatefulSet', () => {
  it('StatefulSet: a complete StatefulSet is valid', () => {
    none(create(S, makeStatefulSet()))
  })

  it('StatefulSet: selector is required', () => {
    const errs = create(S, makeStatefulSet((s) => delete s.selector))
    has(errs, 'spec.selector: Required value')
    // a nil selector matches nothing, so Kubernetes also reports the template labels
    has(errs, 'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match template `labels`')
  })

  it('StatefulSet: selector may not be empty', () => {
    assert.deepEqual(create(S, makeStatefulSet((s) => (s.selector = {}))), ['spec.selector: Invalid value: {}: empty selector is invalid for statefulset'])
  })

  it('StatefulSet: selector must match the pod template labels', () => {
    assert.deepEqual(create(S, makeStatefulSet((s) => (s.template.metadata.labels = {app: 'other'}))), [
      'spec.template.metadata.labels: Invalid value: {"app":"other"}: `selector` does not match template `labels`',
    ])
    none(create(S, makeStatefulSet((s) => (s.selector = {matchExpressions: [{key: 'app', operator: 'In', values: ['web', 'api']}]}))))
  })

  it('StatefulSet: selector expressions must be valid', () => {
    const errs = create(S, makeStatefulSet((s) => (s.selector = {matchExpressions: [{key: 'app', operator: 'Maybe'}]})))
    has(errs, 'spec.selector.matchExpressions[0].operator: Invalid value: "Maybe": not a valid selector operator')
  })

  it('StatefulSet: template.spec.restartPolicy may only be Always', () => {
    assert.deepEqual(create(S, makeStatefulSet((s) => (s.template.spec.restartPolicy = 'Never'))), [
      'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
    ])
  })

  it('StatefulSet: template.spec.activeDeadlineSeconds is not supported', () => {
    assert.deepEqual(create(S, makeStatefulSet((s) => (s.template.spec.activeDeadlineSeconds = 30))), [
      'spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in StatefulSet is not Supported',
    ])
  })

  it('StatefulSet: replicas is not negative', () => {
    assert.deepEqual(create(S, makeStatefulSet((s) => (s.replicas = -1))), ['spec.replicas: Invalid value: -1: must be greater than or equal to 0'])
  })

  it('StatefulSet: updateStrategy.type is RollingUpdate or OnDelete', () => {
    none(create(S, makeStatefulSet((s) => (s.updateStrategy = {type: 'OnDelete'}))))
    assert.deepEqual(create(S, makeStatefulSet((s) => (s.updateStrategy = {type: 'Sometimes'}))), [
      `spec.updateStrategy: Invalid value: {"type":"Sometimes"}: must be 'RollingUpdate' or 'OnDelete'`,
    ])
  })

  it('StatefulSet: updateStrategy.rollingUpdate is only allowed with type RollingUpdate', () => {
    assert.deepEqual(create(S, makeStatefulSet((s) => (s.updateStrategy = {type: 'OnDelete', rollingUpdate: {partition: 1}}))), [
      `spec.updateStrategy.rollingUpdate: Invalid value: {"partition":1}: only allowed for updateStrategy 'RollingUpdate'`,
    ])
  })

  it('StatefulSet: updateStrategy.rollingUpdate.partition is not negative', () => {
    assert.deepEqual(create(S, makeStatefulSet((s) => (s.updateStrategy = {type: 'RollingUpdate', rollingUpdate: {partition: -2}}))), [
      'spec.updateStrategy.rollingUpdate.partition: Invalid value: -2: must be greater than or equal to 0',
    ])
  })

  it('StatefulSet: updateStrategy.rollingUpdate.maxUnavailable cannot be 0', () => {
    const path = 'spec.updateStrategy.rollingUpdate.maxUnavailable'
    const with_ = (maxUnavailable: unknown) => create(S, makeStatefulSet((s) => (s.updateStrategy = {type: 'RollingUpdate', rollingUpdate: {maxUnavailable}})))
    assert.deepEqual(with_(0), [`${path}: Invalid value: 0: cannot be 0`])
    assert.deepEqual(with_('0%'), [`${path}: Invalid value: "0%": cannot be 0`])
    none(with_(1))
    none(with_('1%'))
    none(with_('100%'))
  })

  it('StatefulSet: updateStrategy.rollingUpdate.maxUnavailable is an absolute number or a percentage of at most 100%', () => {
    const path = 'spec.updateStrategy.rollingUpdate.maxUnavailable'
    const with_ = (maxUnavailable: unknown) => create(S, makeStatefulSet((s) => (s.updateStrategy = {type: 'RollingUpdate', rollingUpdate: {maxUnavailable}})))
    assert.deepEqual(with_('101%'), [`${path}: Invalid value: "101%": must not be greater than 100%`])
    assert.deepEqual(with_(-1), [`${path}: Invalid value: -1: must be greater than or equal to 0`])
    assert.deepEqual(with_('half'), [
      `${path}: Invalid value: "half": a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')`,
      `${path}: Invalid value: "half": cannot be 0`,
    ])
  })

  it('StatefulSet: podManagementPolicy is OrderedReady or Parallel', () => {
    none(create(S, makeStatefulSet((s) => (s.podManagementPolicy = 'Parallel'))))
    assert.deepEqual(create(S, makeStatefulSet((s) => (s.podManagementPolicy = 'Random'))), [
      `spec.podManagementPolicy: Invalid value: "Random": must be 'OrderedReady' or 'Parallel'`,
    ])
  })

  it('StatefulSet: revisionHistoryLimit is not negative', () => {
    assert.deepEqual(create(S, makeStatefulSet((s) => (s.revisionHistoryLimit = -1))), ['spec.revisionHistoryLimit: Invalid value: -1: must be greater than or equal to 0'])
  })

  it('StatefulSet: minReadySeconds is not negative', () => {
    assert.deepEqual(create(S, makeStatefulSet((s) => (s.minReadySeconds = -5))), ['spec.minReadySeconds: Invalid value: -5: must be greater than or equal to 0'])
  })

  it('StatefulSet: persistentVolumeClaimRetentionPolicy.whenDeleted and whenScaled are Retain or Delete', () => {
    none(create(S, makeStatefulSet((s) => (s.persistentVolumeClaimRetentionPolicy = {whenDeleted: 'Delete', whenScaled: 'Retain'}))))
    assert.deepEqual(create(S, makeStatefulSet((s) => (s.persistentVolumeClaimRetentionPolicy = {whenDeleted: 'Keep', whenScaled: 'Drop'}))), [
      'spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Keep": supported values: "Retain", "Delete"',
      'spec.persistentVolumeClaimRetentionPolicy.whenScaled: Unsupported value: "Drop": supported values: "Retain", "Delete"',
    ])
  })

  it('StatefulSet: ordinals.start is not negative', () => {
    none(create(S, makeStatefulSet((s) => (s.ordinals = {start: 5}))))
    assert.deepEqual(create(S, makeStatefulSet((s) => (s.ordinals = {start: -1}))), ['spec.ordinals.start: Invalid value: -1: must be greater than or equal to 0'])
  })

  it('StatefulSet: serviceName names the governing service', () => {
    assert.deepEqual(create(S, makeStatefulSet((s) => (s.serviceName = 'Web_Svc'))), [
      `spec.serviceName: Invalid value: "Web_Svc": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
    ])
  })

  it('StatefulSet: each volume claim template must match by name a volumeMount in a template container', () => {
    assert.deepEqual(create(S, makeStatefulSet((s) => (s.volumeClaimTemplates[0].metadata.name = 'data'))), [
      'spec.volumeClaimTemplates[0].metadata.name: Invalid value: "data": must match the name of a volumeMount in a template container',
    ])
  })

  it('StatefulSet: volume claim template names are present, valid and unique', () => {
    const errs = create(
      S,
      makeStatefulSet((s) => {
        s.volumeClaimTemplates.push({metadata: {}}, {metadata: {name: 'Bad_Name'}}, {metadata: {name: 'www'}})
      }),
    )
    has(errs, 'spec.volumeClaimTemplates[1].metadata.name: Required value')
    has(errs, `spec.volumeClaimTemplates[2].metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`)
    has(errs, 'spec.volumeClaimTemplates[3].metadata.name: Duplicate value: "www"')
  })

  it('StatefulSet: the template has containers with unique DNS-label names and an image', () => {
    has(create(S, makeStatefulSet((s) => (s.template.spec.containers = []))), 'spec.template.spec.containers: Required value')
    const errs = create(
      S,
      makeStatefulSet((s) => {
        s.template.spec.containers.push({name: 'nginx', image: 'x'}, {name: 'Side_Car'})
      }),
    )
    has(errs, 'spec.template.spec.containers[1].name: Duplicate value: "nginx"')
    has(errs, 'spec.template.spec.containers[2].image: Required value')
    has(errs, `spec.template.spec.containers[2].name: Invalid value: "Side_Car": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`)
  })

  it('StatefulSet: template container ports are in range', () => {
    assert.deepEqual(create(S, makeStatefulSet((s) => (s.template.spec.containers[0].ports = [{containerPort: 70000}]))), [
      'spec.template.spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive',
    ])
  })

  it('StatefulSet: the name is a DNS label (pods are named <name>-<ordinal>)', () => {
    const sts = makeStatefulSet()
    sts.metadata!.name = 'web.v2'
    assert.deepEqual(create(S, sts), ['metadata.name: Invalid value: "web.v2": must not contain dots'])
  })

  it('StatefulSet: updates may change replicas, ordinals, template, updateStrategy, revisionHistoryLimit, persistentVolumeClaimRetentionPolicy and minReadySeconds', () => {
    const old = makeStatefulSet()
    const next = makeStatefulSet((s) => {
      s.replicas = 5
      s.ordinals = {start: 1}
      s.template.spec.containers[0].image = 'nginx:1.28'
      s.updateStrategy = {type: 'OnDelete'}
      s.revisionHistoryLimit = 3
      s.persistentVolumeClaimRetentionPolicy = {whenDeleted: 'Delete', whenScaled: 'Delete'}
      s.minReadySeconds = 10
    })
    none(update(S, next, old))
  })

  it('StatefulSet: updates to other spec fields are forbidden', () => {
    const old = makeStatefulSet()
    const forbiddenText =
      "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
    assert.deepEqual(update(S, makeStatefulSet((s) => (s.serviceName = 'other')), old), [forbiddenText])
    assert.deepEqual(update(S, makeStatefulSet((s) => (s.podManagementPolicy = 'Parallel')), old), [forbiddenText])
    assert.deepEqual(update(S, makeStatefulSet((s) => (s.volumeClaimTemplates[0].spec.resources.requests.storage = '2Gi')), old), [forbiddenText])
  })

  it('StatefulSet: /scale updates run the replicas rule', () => {
    const next = makeStatefulSet((s) => (s.replicas = -1))
    assert.deepEqual(update(S, next, makeStatefulSet(), 'scale'), ['spec.replicas: Invalid value: -1: must be greater than or equal to 0'])
  })

  it('StatefulSet: status counters are not negative and not above status.replicas', () => {
    const sts = makeStatefulSet()
    sts.status = {replicas: 2, readyReplicas: 3, availableReplicas: 1, currentReplicas: -1}
    assert.deepEqual(update(S, sts, makeStatefulSet(), 'status'), [
      'status.currentReplicas: Invalid value: -1: must be greater than or equal to 0',
      'status.readyReplicas: Invalid value: 3: cannot be greater than status.replicas',
    ])
  })

  it('StatefulSet: status.collisionCount cannot be decremented', () => {
    const old = makeStatefulSet()
    old.status = {replicas: 1, collisionCount: 2}
    const next = makeStatefulSet()
    next.status = {replicas: 1, collisionCount: 1}
    assert.deepEqual(update(S, next, old, 'status'), ['status.collisionCount: Invalid value: 1: cannot be decremented'])
  })
})

// ---------- Pod ----------

describe('Pod', () => {
  const P = '/Pod'
  const withSpec = (mutate: (spec: AnyObject) => void): AnyObject => {
    const spec = podSpec()
    mutate(spec)
    return makePod(spec)
  }

  it('Pod: a minimal pod is valid', () => {
    none(create(P, makePod()))
  })

  it('Pod: containers are required', () => {
    assert.deepEqual(create(P, withSpec((s) => (s.containers = []))), ['spec.containers: Required value'])
  })

  it('Pod: container names are unique DNS labels', () => {
    const errs = create(P, withSpec((s) => s.containers.push({name: 'app', image: 'x'}, {name: '', image: 'y'})))
    has(errs, 'spec.containers[1].name: Duplicate value: "app"')
    has(errs, 'spec.containers[2].name: Required value')
    has(create(P, withSpec((s) => s.initContainers = [{name: 'app', image: 'x'}])), 'spec.initContainers[0].name: Duplicate value: "app"')
  })

  it('Pod: container image is required and not padded with whitespace', () => {
    assert.deepEqual(create(P, withSpec((s) => delete s.containers[0].image)), ['spec.containers[0].image: Required value'])
    assert.deepEqual(create(P, withSpec((s) => (s.containers[0].image = ' nginx'))), ['spec.containers[0].image: Invalid value: " nginx": must not have leading or trailing whitespace'])
  })

  it('Pod: restartPolicy is Always, OnFailure or Never', () => {
    none(create(P, withSpec((s) => (s.restartPolicy = 'OnFailure'))))
    assert.deepEqual(create(P, withSpec((s) => (s.restartPolicy = 'Sometimes'))), [
      'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
    ])
  })

  it('Pod: toleration operator is Exists or Equal', () => {
    assert.deepEqual(create(P, withSpec((s) => (s.tolerations = [{key: 'k', operator: 'Like', value: 'v'}]))), [
      'spec.tolerations[0].operator: Unsupported value: "Like": supported values: "Equal", "Exists"',
    ])
  })

  it('Pod: a toleration with operator Exists has no value', () => {
    assert.deepEqual(create(P, withSpec((s) => (s.tolerations = [{key: 'k', operator: 'Exists', value: 'v'}]))), [
      "spec.tolerations[0].operator: Invalid value: \"v\": value must be empty when `operator` is 'Exists'",
    ])
  })

  it('Pod: a toleration with an empty key needs operator Exists', () => {
    none(create(P, withSpec((s) => (s.tolerations = [{operator: 'Exists'}]))))
    assert.deepEqual(create(P, withSpec((s) => (s.tolerations = [{operator: 'Equal'}]))), [
      'spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and all keys"',
    ])
  })

  it('Pod: toleration effect is NoSchedule, PreferNoSchedule or NoExecute', () => {
    assert.deepEqual(create(P, withSpec((s) => (s.tolerations = [{key: 'k', operator: 'Exists', effect: 'Never'}]))), [
      'spec.tolerations[0].effect: Unsupported value: "Never": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
    ])
  })

  it('Pod: tolerationSeconds only with effect NoExecute', () => {
    none(create(P, withSpec((s) => (s.tolerations = [{key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300}]))))
    assert.deepEqual(create(P, withSpec((s) => (s.tolerations = [{key: 'k', operator: 'Exists', effect: 'NoSchedule', tolerationSeconds: 300}]))), [
      "spec.tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set",
    ])
  })

  it('Pod: nodeSelector keys are label keys and values label values', () => {
    const errs = create(P, withSpec((s) => (s.nodeSelector = {'disk type': 'ssd', zone: 'a b'})))
    assert.equal(errs.length, 2)
    assert.ok(errs[0]!.startsWith('spec.nodeSelector: Invalid value: "disk type": name part must consist of alphanumeric characters'))
    assert.ok(errs[1]!.startsWith('spec.nodeSelector: Invalid value: "a b": a valid label must be an empty string'))
  })

  const required = (expressions: AnyObject[]) => (s: AnyObject) =>
    (s.affinity = {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: expressions}]}}})
  const term0 = 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0]'

  it('Pod: node affinity operators In and NotIn need values', () => {
    assert.deepEqual(create(P, withSpec(required([{key: 'zone', operator: 'In'}]))), [`${term0}.values: Required value: must be specified when \`operator\` is 'In' or 'NotIn'`])
  })

  it('Pod: node affinity operators Exists and DoesNotExist take no values', () => {
    assert.deepEqual(create(P, withSpec(required([{key: 'zone', operator: 'Exists', values: ['a']}]))), [
      `${term0}.values: Forbidden: may not be specified when \`operator\` is 'Exists' or 'DoesNotExist'`,
    ])
  })

  it('Pod: node affinity operators Gt and Lt take exactly one integer value', () => {
    none(create(P, withSpec(required([{key: 'cores', operator: 'Gt', values: ['4']}]))))
    assert.deepEqual(create(P, withSpec(required([{key: 'cores', operator: 'Lt', values: ['4', '8']}]))), [
      `${term0}.values: Required value: must be specified single value when \`operator\` is 'Lt' or 'Gt'`,
    ])
    assert.deepEqual(create(P, withSpec(required([{key: 'cores', operator: 'Gt', values: ['four']}]))), [`${term0}.values[0]: Invalid value: "four": must be an integer`])
    assert.deepEqual(create(P, withSpec(required([{key: 'cores', operator: 'About', values: ['4']}]))), [`${term0}.operator: Invalid value: "About": not a valid selector operator`])
  })

  it('Pod: required node affinity has at least one node selector term', () => {
    const errs = create(P, withSpec((s) => (s.affinity = {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: []}}})))
    assert.deepEqual(errs, ['spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Required value: must have at least one node selector term'])
  })

  it('Pod: seccompProfile type is Unconfined, RuntimeDefault or Localhost', () => {
    none(create(P, withSpec((s) => (s.securityContext = {seccompProfile: {type: 'RuntimeDefault'}}))))
    assert.deepEqual(create(P, withSpec((s) => (s.securityContext = {seccompProfile: {type: 'Strict'}}))), [
      'spec.securityContext.seccompProfile.type: Unsupported value: "Strict": supported values: "Localhost", "RuntimeDefault", "Unconfined"',
    ])
    assert.deepEqual(create(P, withSpec((s) => (s.containers[0].securityContext = {seccompProfile: {}}))), [
      'spec.containers[0].securityContext.seccompProfile.type: Required value: type is required when seccompProfile is set',
    ])
  })

  it('Pod: seccompProfile localhostProfile is used with Localhost only', () => {
    none(create(P, withSpec((s) => (s.securityContext = {seccompProfile: {type: 'Localhost', localhostProfile: 'profiles/audit.json'}}))))
    assert.deepEqual(create(P, withSpec((s) => (s.securityContext = {seccompProfile: {type: 'Localhost'}}))), [
      'spec.securityContext.seccompProfile.localhostProfile: Required value: must be set when seccomp type is Localhost',
    ])
    assert.deepEqual(create(P, withSpec((s) => (s.securityContext = {seccompProfile: {type: 'Localhost', localhostProfile: '../etc/x.json'}}))), [
      "spec.securityContext.seccompProfile.localhostProfile: Invalid value: \"../etc/x.json\": must not contain '..'",
    ])
    assert.deepEqual(create(P, withSpec((s) => (s.securityContext = {seccompProfile: {type: 'Unconfined', localhostProfile: 'a.json'}}))), [
      'spec.securityContext.seccompProfile.localhostProfile: Invalid value: {"type":"Unconfined","localhostProfile":"a.json"}: can only be set when seccomp type is Localhost',
    ])
  })

  it('Pod: container ports are in range', () => {
    const errs = create(P, withSpec((s) => (s.containers[0].ports = [{containerPort: 0}, {containerPort: 8080, hostPort: 70000}])))
    assert.deepEqual(errs, [
      'spec.containers[0].ports[0].containerPort: Required value',
      'spec.containers[0].ports[1].hostPort: Invalid value: 70000: must be between 1 and 65535, inclusive',
    ])
  })

  it('Pod: resource requests may not exceed limits', () => {
    none(create(P, withSpec((s) => (s.containers[0].resources = {requests: {cpu: '500m', memory: '1Gi'}, limits: {cpu: '1', memory: '1Gi'}}))))
    assert.deepEqual(create(P, withSpec((s) => (s.containers[0].resources = {requests: {cpu: '1500m'}, limits: {cpu: '1'}}))), [
      'spec.containers[0].resources.requests: Invalid value: "1500m": must be less than or equal to cpu limit of 1',
    ])
  })

  it('Pod: resource quantities are valid and not negative', () => {
    assert.deepEqual(create(P, withSpec((s) => (s.containers[0].resources = {requests: {memory: '-1Gi'}}))), [
      'spec.containers[0].resources.requests[memory]: Invalid value: "-1Gi": must be greater than or equal to 0',
    ])
    has(create(P, withSpec((s) => (s.containers[0].resources = {limits: {cpu: 'one'}}))), `spec.containers[0].resources.limits[cpu]: Invalid value: "one": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`)
  })

  it('Pod: updates may change container images, activeDeadlineSeconds, added tolerations and terminationGracePeriodSeconds', () => {
    const old = makePod()
    const next = clone(old)
    next.spec.containers[0].image = 'nginx:1.28'
    next.spec.activeDeadlineSeconds = 600
    next.spec.tolerations = [{key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30}]
    none(update(P, next, old))
  })

  it('Pod: updates of other spec fields are forbidden', () => {
    const old = makePod()
    const next = clone(old)
    next.spec.restartPolicy = 'Never'
    const errs = update(P, next, old)
    assert.equal(errs.length, 1)
    assert.ok(errs[0]!.startsWith(`spec: Forbidden: ${POD_UPDATE_FORBIDDEN_PREFIX}\n`))
    assert.ok(errs[0]!.includes('- \trestartPolicy: "Always",\n+ \trestartPolicy: "Never",'))
    assert.equal(
      POD_UPDATE_FORBIDDEN_PREFIX,
      'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
    )
  })

  it('Pod: updates may not add or remove containers', () => {
    const old = makePod()
    const next = clone(old)
    next.spec.containers.push({name: 'side', image: 'busybox'})
    assert.deepEqual(update(P, next, old), ['spec.containers: Forbidden: pod updates may not add or remove containers'])
  })

  it('Pod: existing tolerations may only change their tolerationSeconds', () => {
    const old = withSpec((s) => (s.tolerations = [{key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60}]))
    const lowered = clone(old)
    lowered.spec.tolerations[0].tolerationSeconds = 10
    none(update(P, lowered, old))
    const changed = clone(old)
    changed.spec.tolerations[0].key = 'other'
    assert.deepEqual(update(P, changed, old), ['spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds'])
  })

  it('Pod: activeDeadlineSeconds may be set once, then only lowered', () => {
    const old = withSpec((s) => (s.activeDeadlineSeconds = 100))
    const raised = clone(old)
    raised.spec.activeDeadlineSeconds = 200
    assert.deepEqual(update(P, raised, old), ['spec.activeDeadlineSeconds: Invalid value: 200: must be less than or equal to previous value'])
    const unset = clone(old)
    delete unset.spec.activeDeadlineSeconds
    assert.deepEqual(update(P, unset, old), ['spec.activeDeadlineSeconds: Invalid value: null: must not update from a positive integer to nil value'])
  })
})
