/**
 * The normalised model (types.ts) is derived from what the valibot schemas output; only the fields parse.ts's
 * finalise step completes are written out there. These checks pin that list: a field finalise() starts to
 * complete (or stops completing) must be named here and in types.ts, and the completed fields keep precise
 * types (never `any` or `unknown`). Checked by `pnpm typecheck` (a failed expectation is a type error).
 */
import type * as v from 'valibot'
import { describe, expectTypeOf, it } from 'vitest'
import type { Kind } from '../kinds.js'
import type { manifestSchemas } from './schemas.js'
import type { ArtifactSpec, BackupJobSpec, LxcSpec, ManifestOfKind, VmDisk, VmNic, VmSpec } from './types.js'

type SchemaSpec<K extends Kind> = v.InferOutput<(typeof manifestSchemas)[K]>['spec']
type ModelSpec<K extends Kind> = ManifestOfKind<K>['spec']
type Shared<K extends Kind> = keyof SchemaSpec<K> & keyof ModelSpec<K>
/** the fields whose schema output is not already the model's type: the ones finalise() completes */
type Completed<K extends Kind> = {
  [F in Shared<K>]: SchemaSpec<K>[F] extends ModelSpec<K>[F] ? never : F
}[Shared<K>]
type OnlyInSchema<K extends Kind> = Exclude<keyof SchemaSpec<K>, keyof ModelSpec<K>>
type OnlyInModel<K extends Kind> = Exclude<keyof ModelSpec<K>, keyof SchemaSpec<K>>

describe('the manifest model is the schemas’ output', () => {
  it('has the same spec fields as the schema of every kind (the artifacts’ legacy `node` becomes `nodes`)', () => {
    expectTypeOf<OnlyInSchema<'VM'>>().toEqualTypeOf<never>()
    expectTypeOf<OnlyInSchema<'TemplateVM'>>().toEqualTypeOf<never>()
    expectTypeOf<OnlyInSchema<'LXC'>>().toEqualTypeOf<never>()
    expectTypeOf<OnlyInSchema<'TemplateCT'>>().toEqualTypeOf<never>()
    expectTypeOf<OnlyInSchema<'BackupJob'>>().toEqualTypeOf<never>()
    expectTypeOf<OnlyInSchema<'Pool'>>().toEqualTypeOf<never>()
    expectTypeOf<OnlyInSchema<'Role' | 'Group' | 'User' | 'Token' | 'ACL'>>().toEqualTypeOf<never>()
    expectTypeOf<OnlyInSchema<'ISO'>>().toEqualTypeOf<'node'>()
    expectTypeOf<OnlyInSchema<'CTTemplate'>>().toEqualTypeOf<'node'>()
    expectTypeOf<OnlyInSchema<'DiskImage'>>().toEqualTypeOf<'node'>()
    expectTypeOf<OnlyInModel<'VM'>>().toEqualTypeOf<never>()
    expectTypeOf<OnlyInModel<'TemplateVM'>>().toEqualTypeOf<never>()
    expectTypeOf<OnlyInModel<'LXC'>>().toEqualTypeOf<never>()
    expectTypeOf<OnlyInModel<'TemplateCT'>>().toEqualTypeOf<never>()
    expectTypeOf<OnlyInModel<'ISO'>>().toEqualTypeOf<never>()
    expectTypeOf<OnlyInModel<'CTTemplate'>>().toEqualTypeOf<never>()
    expectTypeOf<OnlyInModel<'DiskImage'>>().toEqualTypeOf<never>()
    expectTypeOf<OnlyInModel<'BackupJob'>>().toEqualTypeOf<never>()
    expectTypeOf<OnlyInModel<'Pool'>>().toEqualTypeOf<never>()
  })

  it('types every other field as the schema outputs it', () => {
    expectTypeOf<Completed<'VM'>>().toEqualTypeOf<'disks' | 'networks' | 'pve-name'>()
    expectTypeOf<Completed<'TemplateVM'>>().toEqualTypeOf<'state' | 'disks' | 'networks' | 'pve-name'>()
    expectTypeOf<Completed<'LXC'>>().toEqualTypeOf<'networks' | 'mount-points' | 'bind-mounts' | 'dns'>()
    expectTypeOf<Completed<'TemplateCT'>>().toEqualTypeOf<
      'state' | 'networks' | 'mount-points' | 'bind-mounts' | 'dns'
    >()
    expectTypeOf<Completed<'ISO'>>().toEqualTypeOf<'nodes' | 'checksum'>()
    expectTypeOf<Completed<'CTTemplate'>>().toEqualTypeOf<'nodes' | 'checksum'>()
    expectTypeOf<Completed<'DiskImage'>>().toEqualTypeOf<'nodes' | 'checksum'>()
    expectTypeOf<Completed<'BackupJob'>>().toEqualTypeOf<'id' | 'selection' | 'prune-backups'>()
    expectTypeOf<Completed<'Pool'>>().toEqualTypeOf<'id'>()
    expectTypeOf<Completed<'Role'>>().toEqualTypeOf<'roleid'>()
    expectTypeOf<Completed<'Group'>>().toEqualTypeOf<'groupid'>()
    expectTypeOf<Completed<'User'>>().toEqualTypeOf<never>()
    expectTypeOf<Completed<'Token'>>().toEqualTypeOf<'tokenid'>()
    expectTypeOf<Completed<'ACL'>>().toEqualTypeOf<'propagate'>()
  })

  it('completes the defaulted fields with precise types', () => {
    expectTypeOf<VmDisk['interface']>().toEqualTypeOf<string>()
    expectTypeOf<VmNic['slot']>().toEqualTypeOf<string>()
    expectTypeOf<VmSpec['pve-name']>().toEqualTypeOf<string>()
    expectTypeOf<VmSpec['memory']>().toEqualTypeOf<number>()
    expectTypeOf<ManifestOfKind<'TemplateVM'>['spec']['state']>().toEqualTypeOf<'stopped'>()
    expectTypeOf<LxcSpec['dns']['hostname']>().toEqualTypeOf<string>()
    expectTypeOf<LxcSpec['mount-points'][number]['slot']>().toEqualTypeOf<string>()
    expectTypeOf<ArtifactSpec['nodes']>().toEqualTypeOf<string[]>()
    expectTypeOf<NonNullable<ArtifactSpec['checksum']>['algorithm']>().toEqualTypeOf<
      'sha256' | 'sha1' | 'sha512' | 'md5'
    >()
    expectTypeOf<BackupJobSpec['id']>().toEqualTypeOf<string>()
    expectTypeOf<BackupJobSpec['selection']>().toEqualTypeOf<
      { vmids: number[] } | { pool: string } | { all: true; exclude: number[] }
    >()
  })
})
