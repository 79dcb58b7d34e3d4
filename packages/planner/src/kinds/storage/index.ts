/** The storage kind: storage.cfg sections of `/storage` (`Storage` manifests). docs/storage.md */
import type { StorageManifest } from '@proxops/schema'
import { adoptable } from '../../kit/adopt.js'
import { defineKind } from '../../kit/kind.js'
import { one } from '../../kit/privileges.js'
import { sanitiseName } from '../../kit/names.js'
import { storageAddress } from './address.js'
import { adoptStorage } from './adopt.js'
import { confirmStorage } from './confirm.js'
import { planStorages } from './plan.js'
import { readStorages } from './read.js'
import { storageRunners } from './run.js'

const isStorage = (m: { kind: string }): m is StorageManifest => m.kind === 'Storage'

/** PVE::API2::Storage::Config create / update / delete: Datastore.Allocate on /storage */
const allocate = () => [{ need: one('/storage', 'Datastore.Allocate') }]

export const storage = defineKind({
  name: 'storage',
  manifests: ['Storage'],
  addresses: (m) => (isStorage(m) ? [storageAddress(m.spec.id)] : []),
  observe: (desired) => ({
    declaredStorages: desired.manifests.filter(isStorage).map((m) => m.spec.id),
  }),
  read: readStorages,
  plan: planStorages,
  // last: a storage goes only once nothing this plan keeps or prunes before it names it
  pruneOrder: 5,
  run: storageRunners,
  privileges: {
    createStorage: allocate,
    updateStorage: allocate,
    deleteStorage: allocate,
  },
  confirm: confirmStorage,
  summary: { create: 'create', update: 'update', delete: 'delete' },
  adopt: {
    order: 6,
    run(live, ctx) {
      for (const s of adoptable(live.storageConfigs, ctx, 'storages') ?? []) {
        const file = adoptStorage(
          s,
          ctx.options.cluster,
          ctx.claim('Storage', sanitiseName(s.storage, 'storage'), s.storage),
          ctx.collect.gaps,
        )
        if (file) ctx.files.push(file)
      }
    },
  },
})
