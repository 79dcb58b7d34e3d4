/**
 * Planning storages (pure): create a declared storage that is missing, update the options it declares that
 * differ, send a credential again when its fingerprint changed, and delete an owned storage git no longer
 * declares, never while it holds a volume (pve-storage PVE::API2::Storage::Config create / update / delete).
 *
 * Ownership (docs/storage.md#ownership-and-credentials): a storage.cfg section has no comment to carry a marker,
 * so ProxOps owns a storage only when its ledger (ports.ts StorageLedger, kept in the CLI's data dir) records that
 * this cluster entry created or changed it. Declaring a storage id that exists is the claim: the first write
 * records it. A storage the ledger does not name (made by hand, by another entry, or before the ledger) is never
 * deleted. ProxOps manages only the keys a manifest declares; an undeclared key stays as it is.
 *
 * Credentials: PVE never returns a password or keyring (extract_sensitive_params). The ledger keeps a keyed
 * fingerprint of what was sent; a reference whose value hashes differently (a rotation in SOPS) or was never
 * recorded is sent once more. A PBS `encryption-key` is compared with the fingerprint PVE lists (PBSPlugin
 * on_add_hook writes the key's fingerprint into storage.cfg).
 */
import { optionFixed, type StorageManifest } from '@proxops/schema'
import { SENSITIVE } from '@proxops/pve-client/wire'
import type { LiveStorageConfig } from '../../inventory.js'
import type { Anomaly, FieldDiff, PlanParamValue, Skip } from '../../plan-types.js'
import { skipUnread, unreadReason, type Draft } from '../../kit/draft.js'
import { emptyPlan, type KindContext, type KindPlan, type PruneCandidate } from '../../kit/kind.js'
import { compare } from '../../kit/text.js'
import { declaredOptions, declaredSecrets, liveOption } from './fields.js'
import { storageAddress } from './address.js'
import { namedStorages } from './named.js'

const KIND = 'Storage' as const
/** how many volumes a blocked prune names before it counts the rest */
const SHOWN = 10

const secretParam = (ref: string): PlanParamValue => ({ secret: { refs: [ref], encoding: 'plain' } })

/** the fingerprint inside a PBS key file (JSON with `fingerprint`), which PVE lists as `encryption-key` */
function keyFingerprint(value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  try {
    const fp = (JSON.parse(value) as { fingerprint?: unknown }).fingerprint
    return typeof fp === 'string' && fp !== '' ? fp : undefined
  } catch {
    return undefined
  }
}

export function planStorages(ctx: KindContext): KindPlan {
  const out = emptyPlan()
  const desired = ctx.desired.manifests
    .filter((m): m is StorageManifest => m.kind === 'Storage')
    .sort((a, b) => compare(a.spec.id, b.spec.id))
  const observed = ctx.live.storageConfigs
  if (observed === undefined || 'unreadable' in observed) {
    const objects = desired.map((m) => ({ address: storageAddress(m.spec.id), kind: KIND }))
    const reason = unreadReason(observed)
    skipUnread(out.skips, objects, `storages could not be read this cycle (${reason}); no create, update or delete`)
    return out
  }
  const live = new Map(observed.known.map((s) => [s.storage, s]))
  const owned = new Set(ctx.ledger?.owned() ?? [])
  for (const m of desired) planOne(ctx, m, live.get(m.spec.id), owned.has(m.spec.id), out)

  const ids = new Set(desired.map((m) => m.spec.id))
  const candidates = [...owned].filter((id) => !ids.has(id) && live.has(id)).sort(compare)
  const named = namedStorages(ctx.desired.manifests)
  out.prunes = {
    guarded: true,
    owner: 'owned',
    noun: 'live storage(s)',
    owned: new Map([[KIND, [...owned].filter((id) => live.has(id)).length]]),
    desired: new Map([[KIND, desired.length]]),
    candidates: () => pruneCandidates(ctx, candidates, named),
  }
  return out
}

function planOne(
  ctx: KindContext,
  m: StorageManifest,
  live: LiveStorageConfig | undefined,
  owned: boolean,
  out: KindPlan,
): void {
  const id = m.spec.id
  const address = storageAddress(id)
  const base = {
    resource: `Storage/${m.metadata.name}`,
    address,
    kind: KIND,
    name: m.metadata.name,
    node: '',
    disruption: 'none' as const,
    tier: 0 as const,
    level: ctx.levelOf(`Storage/${m.metadata.name}`),
  }
  const anomaly = (a: Omit<Anomaly, 'address' | 'kind'>) => out.anomalies.push({ ...a, address, kind: KIND })
  const options = declaredOptions(m)
  const secrets = declaredSecrets(m)
  if (!live) {
    const params: Record<string, PlanParamValue> = { storage: id, type: m.spec.type }
    for (const o of options) params[o.key] = o.value
    for (const s of secrets) params[s.key] = secretParam(s.ref)
    out.drafts.push({
      ...base,
      type: 'create',
      reason: `${address}: not on PVE; will create`,
      diffs: [
        { field: 'spec.type', key: 'type', after: m.spec.type },
        ...options.map((o) => ({ field: `spec.${o.key}`, key: o.key, after: o.value })),
        ...secrets.map((s) => ({ field: `spec.${s.key}-ref`, key: s.key, after: SENSITIVE })),
      ],
      requests: [{ call: 'createStorage', params }],
    })
    return
  }
  if (live.type !== m.spec.type) {
    anomaly({
      code: 'kind-mismatch',
      field: 'spec.type',
      message: `storage ${id} is a ${live.type} storage on PVE, not ${m.spec.type}; PVE cannot change a storage's type: remove it by hand or choose another id`,
    })
    return
  }
  const diffs: FieldDiff[] = []
  const params: Record<string, PlanParamValue> = {}
  const del: string[] = []
  for (const o of options) {
    const before = liveOption(live, o.key)
    if (before === o.value) continue
    if (optionFixed(o.key, m.spec.type)) {
      // check_config: a fixed option cannot be sent on update, even unchanged
      anomaly({
        code: 'create-only-option',
        field: `spec.${o.key}`,
        message: `${o.key} of ${m.spec.type} storage ${id} is ${JSON.stringify(before ?? '')} on PVE, not ${JSON.stringify(o.value)}; PVE fixes it at create (check_config): recreate the storage by hand to change it`,
      })
      continue
    }
    if (o.key === 'nodes' && o.value === '') {
      if (before === undefined) continue
      del.push('nodes')
    } else params[o.key] = o.value
    diffs.push({
      field: `spec.${o.key}`,
      key: o.key,
      ...(before !== undefined ? { before } : {}),
      ...(o.value !== '' ? { after: o.value } : {}),
    })
  }
  const resent: string[] = []
  for (const s of secrets) {
    const why = secretChanged(ctx, id, s.key, s.ref, live)
    if (why === undefined) continue
    params[s.key] = secretParam(s.ref)
    resent.push(`${s.key}: ${why}`)
    diffs.push({ field: `spec.${s.key}-ref`, key: s.key, before: SENSITIVE, after: SENSITIVE })
  }
  if (diffs.length === 0) return
  if (del.length > 0) params.delete = del.join(',')
  const drift = diffs.filter((d) => !resent.some((r) => r.startsWith(`${d.key}:`))).map((d) => d.key)
  out.drafts.push({
    ...base,
    type: 'update',
    reason: `${address}: ${owned || !ctx.ledger ? '' : "claimed (declared; recorded as this entry's in the ledger); "}${[
      ...(drift.length > 0 ? [`drift (${drift.join(', ')})`] : []),
      ...resent.map((r) => `credential ${r}`),
    ].join('; ')}`,
    diffs,
    requests: [{ call: 'updateStorage', storage: id, params }],
  })
}

/** why a declared credential must be sent again, or undefined when PVE has it (as far as ProxOps can know) */
function secretChanged(
  ctx: KindContext,
  id: string,
  key: string,
  ref: string,
  live: LiveStorageConfig,
): string | undefined {
  const value = ctx.secrets?.(ref)
  if (key === 'encryption-key') {
    const fp = keyFingerprint(value)
    if (fp !== undefined)
      return live.values['encryption-key'] === fp ? undefined : 'the key fingerprint PVE lists differs'
  }
  // PVE never returns it: without a ledger or the value, ProxOps cannot compare and sends it on create only
  if (!ctx.ledger || value === undefined) return undefined
  const recorded = ctx.ledger.fingerprint(id, key)
  if (recorded === undefined) return 'no fingerprint recorded yet (sent once)'
  return recorded === ctx.ledger.digest(value) ? undefined : 'changed in SOPS (its fingerprint differs)'
}

function pruneCandidates(
  ctx: KindContext,
  ids: readonly string[],
  named: ReadonlyMap<string, string>,
): { candidates: PruneCandidate[]; skips: Skip[]; anomalies: Anomaly[] } {
  const candidates: PruneCandidate[] = []
  const skips: Skip[] = []
  const skip = (id: string, code: Skip['code'], message: string) =>
    skips.push({ code, address: storageAddress(id), kind: KIND, node: '', message })
  for (const id of ids) {
    const user = named.get(id)
    if (user !== undefined) {
      skip(id, 'prune-guard', `owned and absent in git, but not deleted: ${user} names it`)
      continue
    }
    const volumes = ctx.live.storageVolumes?.[id]
    if (volumes === undefined || 'unreadable' in volumes) {
      skip(
        id,
        'prune-guard',
        `owned and absent in git, but not deleted: its volumes could not be listed (${volumes === undefined ? 'not read' : volumes.unreadable}), and a storage that holds volumes is never removed`,
      )
      continue
    }
    if (volumes.known.length > 0) {
      const shown = volumes.known.slice(0, SHOWN).join(', ')
      const more = volumes.known.length > SHOWN ? ` and ${volumes.known.length - SHOWN} more` : ''
      skip(
        id,
        'prune-guard',
        `owned and absent in git, but not deleted: it still holds ${volumes.known.length} volume(s) (${shown}${more}); move or remove them first`,
      )
      continue
    }
    const draft: Draft = {
      id: `${storageAddress(id)}#delete`,
      address: storageAddress(id),
      kind: KIND,
      node: '',
      type: 'delete',
      reason: "recorded as this entry's in the ledger, absent in git, holds no volume",
      diffs: [],
      disruption: 'none',
      tier: 9,
      level: 0,
      requests: [{ call: 'deleteStorage', storage: id }],
    }
    candidates.push({ kind: KIND, draft })
  }
  return { candidates, skips, anomalies: [] }
}
