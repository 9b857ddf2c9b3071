import {Command, Flags} from '@oclif/core'
import {runAgentCommand} from '../src/cli/agent.js'

export default class Agent extends Command {
  static override summary = 'Run the node agent: register this machine as a Node and run the pods bound to it.'
  static override description =
    'Reads its configuration (--config, then the --config-dir drop-ins in lexical order; flags win), joins the cluster with --kubeconfig or a bootstrap token (--bootstrap-kubeconfig: a CSR for its client certificate), registers its Node, keeps its Lease and status current and runs pods through CRI: containerd or another runtime at containerRuntimeEndpoint, else the built-in process runtime. Without a kubeconfig it runs standalone: static pods from staticPodPath only.'
  static override examples = [
    '<%= config.bin %> agent --bootstrap-kubeconfig bootstrap.kubeconfig --kubeconfig /var/lib/agent/agent.kubeconfig',
    '<%= config.bin %> agent --config agent.yaml --config-dir /etc/orch/agent.conf.d --print-config',
    '<%= config.bin %> agent --root-dir /tmp/agent --lock-file /tmp/agent.lock --pod-manifest-path /tmp/manifests',
  ]

  static override flags = {
    config: Flags.string({description: 'the agent configuration file (agent.config.orch.io/v1beta1 AgentConfiguration)'}),
    'config-dir': Flags.string({description: 'a directory of drop-in configuration files (*.conf, lexical order) that override --config'}),
    'print-config': Flags.boolean({description: 'print the merged configuration as YAML and exit', default: false}),
    kubeconfig: Flags.string({description: 'the kubeconfig the agent talks to the server with (written here after a bootstrap)'}),
    'bootstrap-kubeconfig': Flags.string({description: 'a kubeconfig with a bootstrap token, used to obtain a client certificate when --kubeconfig does not work'}),
    'cert-dir': Flags.string({description: 'where certificates and keys are kept (default {root-dir}/pki)'}),
    'root-dir': Flags.string({description: "the agent's state directory", default: '/var/lib/agent'}),
    'lock-file': Flags.string({description: 'a lock file: a second agent on the same file refuses to start', default: '/var/run/agent.lock'}),
    'hostname-override': Flags.string({description: "the Node's name and Hostname address, instead of the host's name"}),
    runtime: Flags.option({options: ['process', 'cri'] as const, description: 'process: the built-in process runtime; cri: the runtime at containerRuntimeEndpoint (default: cri when an endpoint is configured)'})(),
    'container-runtime-endpoint': Flags.string({description: 'the CRI runtime socket, e.g. unix:///run/containerd/containerd.sock'}),
    'image-service-endpoint': Flags.string({description: 'the CRI image service socket (default: the runtime endpoint)'}),
    'process-runtime-images': Flags.string({description: 'a file of image rules for the process runtime (globs; !glob refuses)'}),
    'pod-manifest-path': Flags.string({description: 'static pod manifests (staticPodPath)'}),
    address: Flags.string({description: 'the address the agent serves HTTPS on'}),
    port: Flags.integer({description: 'the port the agent serves HTTPS on (0 = any free port)', min: 0, max: 65535}),
    'feature-gates': Flags.string({description: 'gates, e.g. PodsAPI=true,ContainerCheckpoint=false'}),
    'node-labels': Flags.string({description: 'labels to register the Node with: key=value,...'}),
    'register-with-taints': Flags.string({description: 'taints to register the Node with: key=value:Effect,...'}),
    'fail-swap-on': Flags.boolean({description: 'refuse to start when swap is on', allowNo: true}),
    'max-pods': Flags.integer({description: 'pods this node can run', min: 1}),
    'node-status-update-frequency': Flags.string({description: 'how often the Node status is computed (e.g. 10s)'}),
    'relist-period': Flags.string({description: 'how often the pod lifecycle event generator lists the runtime (e.g. 1s)', default: '1s'}),
    v: Flags.integer({description: 'log verbosity (0 = info only)', default: 0, min: 0}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Agent)
    await runAgentCommand(flags, this.config.version)
  }
}
