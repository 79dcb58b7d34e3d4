/** The guest kinds' schema side (kinds/contract.ts): VM and TemplateVM (qemu), LXC and TemplateCT (containers). */
import type { SchemaKind } from '../contract.js'
import { finaliseGuest } from './finalise.js'
import { guestIdentity } from './identity.js'
import { guestReferences } from './references.js'
import { lxcSpecSchema, templateCtSpecSchema, templateVmSpecSchema, vmSpecSchema } from './schema.js'
import type { LxcManifest, TemplateCtManifest, TemplateVmManifest, VmManifest } from './types.js'

const common = {
  guest: true,
  allowEmpty: true,
  finalise: finaliseGuest,
  references: guestReferences,
  identity: guestIdentity,
} as const

export const vm = {
  name: 'VM',
  aliases: [],
  root: 'vm',
  description: 'A qemu virtual machine.',
  spec: vmSpecSchema,
  ...common,
} as const satisfies SchemaKind<VmManifest>

export const templateVm = {
  name: 'TemplateVM',
  aliases: ['TVM', 'TEMPLATE'],
  root: 'templatevm',
  description: 'A qemu VM template (created, then converted with template=1).',
  spec: templateVmSpecSchema,
  ...common,
} as const satisfies SchemaKind<TemplateVmManifest>

export const lxc = {
  name: 'LXC',
  aliases: [],
  root: 'lxc',
  description: 'An LXC container.',
  spec: lxcSpecSchema,
  ...common,
} as const satisfies SchemaKind<LxcManifest>

export const templateCt = {
  name: 'TemplateCT',
  aliases: ['TCT'],
  root: 'templatect',
  description: 'An LXC container template.',
  spec: templateCtSpecSchema,
  ...common,
} as const satisfies SchemaKind<TemplateCtManifest>
