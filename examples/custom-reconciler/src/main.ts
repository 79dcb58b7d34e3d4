/**
 * Command-line entry of the example: `PVE_URL=https://pve:8006 PVE_TOKEN_ID='root@pam!fleet' PVE_TOKEN_SECRET=...
 * PVE_FINGERPRINT=AA:BB:.. node dist/main.js [--apply] [--web N]`. Without --apply it only prints the plan.
 */
import { createPveClient } from '@proxops/pve-client'
import { fleet } from './fleet.js'
import { reconcile } from './reconciler.js'

async function main(argv: readonly string[]): Promise<number> {
  const env = process.env
  if (!env.PVE_URL || !env.PVE_TOKEN_ID || !env.PVE_TOKEN_SECRET) {
    console.error('set PVE_URL, PVE_TOKEN_ID and PVE_TOKEN_SECRET (and PVE_FINGERPRINT or PVE_CA_FILE)')
    return 2
  }
  const webIndex = argv.indexOf('--web')
  const web = webIndex >= 0 ? Number(argv[webIndex + 1]) : 2
  const nodes = (env.PVE_NODES ?? 'pve1').split(',')
  const client = createPveClient({
    baseUrl: env.PVE_URL,
    auth: { type: 'token', tokenId: env.PVE_TOKEN_ID, secret: env.PVE_TOKEN_SECRET },
    tls: env.PVE_FINGERPRINT ? { fingerprint: env.PVE_FINGERPRINT } : env.PVE_CA_FILE ? { ca: env.PVE_CA_FILE } : {},
  })
  try {
    const result = await reconcile({
      cluster: env.PVE_CLUSTER ?? 'default',
      desired: fleet({ web, nodes, cache: argv.includes('--cache') }),
      reader: client,
      ...(argv.includes('--apply') ? { writer: client } : {}),
      policy: { nodes, pruneBudget: 1 },
    })
    return result.report && !result.report.complete ? 1 : 0
  } finally {
    await client.close()
  }
}

process.exitCode = await main(process.argv.slice(2))
