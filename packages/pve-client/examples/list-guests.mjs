// Lists every guest of a Proxmox VE cluster, then (optionally) starts one and waits for its task.
//
//   pnpm --filter @proxops/pve-client build
//   PVE_URL=https://pve1.example:8006 PVE_TOKEN_ID='root@pam!proxops' PVE_TOKEN_SECRET=... \
//   PVE_FINGERPRINT='AA:BB:...' node packages/pve-client/examples/list-guests.mjs [node vmid]
//
// PVE_FINGERPRINT is the certificate's SHA-256 as the GUI shows it (Node > System > Certificates);
// PVE_CA (a PEM file such as /etc/pve/pve-root-ca.pem) works instead.
import { pathToFileURL } from 'node:url'
import { createPveClient, isPveError } from '@proxops/pve-client'

export async function main(env = process.env, args = process.argv.slice(2), print = console.log) {
  const client = createPveClient({
    baseUrl: env.PVE_URL ?? 'https://127.0.0.1:8006',
    auth: { type: 'token', tokenId: env.PVE_TOKEN_ID ?? 'root@pam!proxops', secret: env.PVE_TOKEN_SECRET ?? '' },
    tls: env.PVE_CA ? { ca: env.PVE_CA } : { fingerprint: env.PVE_FINGERPRINT ?? '' },
    onRequest: (e) =>
      env.PVE_DEBUG && print(`${e.method} ${e.path} -> ${e.status ?? e.errorCode} (${Math.round(e.latencyMs)} ms)`),
  })
  try {
    const { version } = await client.version()
    print(`PVE ${version}`)
    for (const node of await client.nodes()) {
      if (node.status !== 'online') continue
      for (const type of ['qemu', 'lxc']) {
        for (const guest of await client.listGuests(node.node, type)) {
          print(
            `${node.node} ${type} ${guest.vmid} ${guest.name ?? '-'} ${guest.status}${guest.template ? ' (template)' : ''}`,
          )
        }
      }
    }
    const [node, vmid] = args
    if (node && vmid) {
      const task = await client.start(node, 'qemu', Number(vmid))
      const result = await client.waitTask(task, { timeoutMs: 120_000 })
      print(`start ${vmid}: ${result.ok ? 'ok' : 'failed'} (${result.exitstatus})`)
      for (const line of result.log) print(`  ${line}`)
    }
  } catch (err) {
    // err.code is stable: PVE_AUTH, PVE_TLS_FINGERPRINT, PVE_NOT_FOUND, PVE_LOCKED, PVE_TRANSIENT, ...
    if (isPveError(err)) print(`error ${err.code}: ${err.message}`)
    else throw err
    process.exitCode = 1
  } finally {
    await client.close()
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main()
