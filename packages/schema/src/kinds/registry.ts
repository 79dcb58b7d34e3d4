/**
 * The manifest kinds, in their canonical order: one line per kind. Every table that lists kinds (kinds.ts:
 * spellings, kind roots, guest kinds, the kinds `--allow-empty` names; the JSON Schema; the reference) is derived
 * from this list. Adding a kind: its folder (kinds/contract.ts says what it holds) and a line here.
 */
import { ctTemplate, diskImage, iso } from './artifact/index.js'
import { backupJob } from './backup-job/index.js'
import { lxc, templateCt, templateVm, vm } from './guest/index.js'
import { pool } from './pool/index.js'
import { acl, group, role, token, user } from './access/index.js'
import { sdnController } from './sdn-controller/index.js'
import { subnet } from './subnet/index.js'
import { vnet } from './vnet/index.js'
import { zone } from './zone/index.js'
import { storage } from './storage/index.js'
import { clusterOptions } from './cluster-options/index.js'

export const SCHEMA_KINDS = [
  vm,
  templateVm,
  lxc,
  templateCt,
  iso,
  ctTemplate,
  diskImage,
  backupJob,
  pool,
  role,
  group,
  user,
  token,
  acl,
  sdnController,
  zone,
  vnet,
  subnet,
  storage,
  clusterOptions,
] as const

type Entry = (typeof SCHEMA_KINDS)[number]
export type Kind = Entry['name']
export type GuestKind = Extract<Entry, { guest: true }>['name']
export type AllowEmptyKind = Extract<Entry, { allowEmpty: true }>['name']
/** the normalised manifest of any kind (manifest/types.ts) */
export type Manifest = Parameters<Entry['finalise']>[0]

// every kind a reference names is a registered kind
type Named = ReturnType<Entry['references']>[number]['kind']
const namedKindsAreRegistered: [Named] extends [Kind] ? true : never = true
void namedKindsAreRegistered
