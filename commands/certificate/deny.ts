import {Args, Command, Flags} from '@oclif/core'
import {runCertificateDecision} from '../../src/cli/certificate.js'
import {connectOptions, globalFlags} from '../../src/cli/connect.js'

export default class Deny extends Command {
  static override summary = 'Deny certificate signing requests.'
  static override description =
    'Adds the Denied condition to each named CertificateSigningRequest through its /approval subresource (retrying on a conflict). The signer then issues (or skips) the certificate. A request already denied is left as it is unless --force.'
  static override examples = ['<%= config.bin %> certificate deny node-csr-abc', '<%= config.bin %> certificate deny csr-1 csr-2 --force']

  static override strict = false
  static override args = {names: Args.string({description: 'names of CertificateSigningRequests', required: true})}
  static override flags = {
    force: Flags.boolean({description: 'update the request even when it is already denied', default: false}),
    ...globalFlags,
  }

  async run(): Promise<void> {
    const {argv, flags} = await this.parse(Deny)
    await runCertificateDecision({...connectOptions(flags), decision: 'deny', names: argv as string[], force: flags.force})
  }
}
