/**
 * The cloud-init data ProxOps writes into a VM's config beside the table's rows (ciuser, nameserver,
 * searchdomain): the SSH keys (`sshkeys`, PVE's urlencoded list), the password (`cipassword`, masked by PVE on
 * read) and the IP configs (`ipconfig<N>`, tokens declared once for create, compare and adopt). A key is owned
 * only when its desired value is non-empty; every write lands at once, the guest reads it at its next boot.
 */
import { decodeSshKeys, encodeSshKeys, sshKeySet } from '@proxops/pve-client/wire'
import type { IpConfig, QemuManifest } from '@proxops/schema'
import type { SecretParam } from '../../plan-types.js'
import { NONE, parsePS, rewrite, write, type Owned } from './fields.js'
import type { GuestBuildContext, GuestFields } from './qemu.js'
import { changedTokens, createTokens, type SlotToken } from './tokens.js'

type CloudInitData = NonNullable<QemuManifest['spec']['cloud-init-data']>

/** The cloud-init identity keys a clone inherits from its template (deleted unless owned). */
export const CLONE_IDENTITY_KEYS = ['ciuser', 'sshkeys', 'cipassword', 'cicustom', 'nameserver', 'searchdomain']

/** The key of the IP config of NIC `n`. */
export const ipconfigKey = (nic: number): string => `ipconfig${nic}`

/** An `ipconfig<N>` value's tokens (qemu-server's ipconfig format) that the manifest models. */
export const IPCONFIG_TOKENS: readonly SlotToken[] = [
  { token: 'ip', field: 'ip', codec: 'string' },
  { token: 'gw', field: 'gateway', codec: 'string' },
]

/** plan: the SSH keys, the password and the IP configs of `spec.cloud-init-data`. */
export function cloudInitDataOwned(ci: CloudInitData, ctx: GuestBuildContext, gaps: GuestFields['gaps']): Owned[] {
  const owned: Owned[] = []
  const keys = sshKeysOwned(ci, ctx, gaps)
  if (keys) owned.push(keys)
  const pw = ci['ci-password-ref']
  if (pw !== undefined && pw !== '') {
    const param: SecretParam = { secret: { refs: [pw], encoding: 'plain' } }
    // PVE masks it on read: write once when absent, never rewrite (the mask would become the password)
    owned.push({
      key: 'cipassword',
      field: 'spec.cloud-init-data.ci-password-ref',
      create: param,
      sensitive: true,
      running: 'none',
      compare: (live) => (live === undefined || live === '' ? [write(param)] : NONE),
    })
  }
  for (const [i, ipc] of (ci.ipconfigs ?? []).entries()) {
    if (ipc.ip !== undefined && ipc.ip !== '') owned.push(ipconfigOwned(ipc, i))
  }
  return owned
}

function ipconfigOwned(ipc: IpConfig, i: number): Owned {
  // an empty gateway is no gateway
  const entry = { ip: ipc.ip, gateway: ipc.gateway === '' ? undefined : ipc.gateway }
  const key = ipconfigKey(ipc.nic)
  const tokens = createTokens(IPCONFIG_TOKENS, entry, key)
  const create = rewrite({}, tokens, undefined, Object.keys(tokens))
  return {
    key,
    field: `spec.cloud-init-data.ipconfigs[${i}]`,
    create,
    running: 'none',
    compare: (live) => {
      const p = live === undefined ? undefined : parsePS(live)
      if (!p) return [write(create)]
      // a rewrite keeps the tokens the manifest does not model (ip6, gw6)
      const changes = changedTokens(IPCONFIG_TOKENS, entry, p)
      return Object.keys(changes).length > 0 ? [write(rewrite(p, changes, undefined))] : NONE
    },
  }
}

function sshKeysOwned(ci: CloudInitData, ctx: GuestBuildContext, gaps: GuestFields['gaps']): Owned | undefined {
  const inline = ci['ssh-keys']
  const refs = ci['ssh-key-refs']
  if (inline !== undefined && inline.length === 1 && inline[0] === '*') return undefined // PVE owns the value
  if (refs !== undefined && refs.length > 0) {
    const param: SecretParam = { secret: { refs: [...refs], encoding: 'sshkeys' } }
    const values = refs.map((r) => ctx.secrets?.(r))
    const known = values.every((v): v is string => v !== undefined)
    if (!known)
      gaps.push({
        field: 'spec.cloud-init-data.ssh-key-refs',
        note: 'secret values not available to plan: sshkeys not compared this cycle',
      })
    const want = known ? sshKeySet(values.join('\n')).join('\n') : undefined
    return {
      key: 'sshkeys',
      field: 'spec.cloud-init-data.ssh-key-refs',
      create: param,
      sensitive: true,
      running: 'none',
      compare: (live) => {
        if (want === undefined) return live === undefined ? [write(param)] : []
        return liveKeySet(live) === want ? NONE : [write(param)]
      },
    }
  }
  if (inline !== undefined && inline.length > 0) {
    const keys = [...new Set(inline.map((k) => k.trim()))]
    const value = encodeSshKeys(keys)
    const want = sshKeySet(keys.join('\n')).join('\n')
    return {
      key: 'sshkeys',
      field: 'spec.cloud-init-data.ssh-keys',
      create: value,
      show: `${keys.length} key(s)`,
      running: 'none',
      compare: (live) => (liveKeySet(live) === want ? NONE : [write(value, `${keys.length} key(s)`)]),
    }
  }
  return undefined
}

/** The live keys as text: PVE's urlencoded list, or (written by hand) the plain lines. */
export function liveSshKeys(live: string): string {
  try {
    return decodeSshKeys(live)
  } catch {
    return live
  }
}

function liveKeySet(live: string | undefined): string {
  return live === undefined ? '' : sshKeySet(liveSshKeys(live)).join('\n')
}
