// A StatefulSet manifest for tests: `name`, whose pods carry app=<name>; each claim template is mounted by the container.

export interface SetOptions {
  replicas?: number
  image?: string
  claims?: string[]
  spec?: Record<string, any>
}

export function statefulSet(name: string, options: SetOptions = {}): any {
  const claims = options.claims ?? []
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: {name},
    spec: {
      serviceName: name,
      replicas: options.replicas ?? 1,
      selector: {matchLabels: {app: name}},
      template: {
        metadata: {labels: {app: name}},
        spec: {
          containers: [
            {name: 'app', image: options.image ?? 'registry.example/app:1', volumeMounts: claims.map((c) => ({name: c, mountPath: `/${c}`}))},
          ],
        },
      },
      volumeClaimTemplates: claims.map((c) => ({metadata: {name: c}, spec: {accessModes: ['ReadWriteOnce'], resources: {requests: {storage: '1Gi'}}}})),
      ...options.spec,
    },
  }
}
