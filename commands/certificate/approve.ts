import {Args, Command, Flags} from '@oclif/core'
import {runCertificateDecision} from '../../src/cli/certificate.js'
import {connectOptions, globalFlags} from '../../src/cli/connect.js'

export default class Approve extends Command {
  static override summary = 'Approve certificate signing requests.'
  static override description =
    'Adds the Approved condition to each named CertificateSigningRequest through its /approval subresource (retrying on a conflict). The signer then issues (or skips) the certificate. A request already approved is left as it is unless --force.'
  static override examples = ['<%= config.bin %> certificate approve node-csr-abc', '<%= config.bin %> certificate approve csr-1 csr-2 --force']

  static override strict = false
  static override args = {names: Args.string({description: 'names of CertificateSigningRequests', required: true})}
  static override flags = {
    force: Flags.boolean({description: 'update the request even when it is already approved', default: false}),
    ...globalFlags,
  }

  async run(): Promise<void> {
    const {argv, flags} = await this.parse(Approve)
    await runCertificateDecision({...connectOptions(flags), decision: 'approve', names: argv as string[], force: flags.force})
  }
}
