/** The guest kinds' schema side (kinds/contract.ts): VM and TemplateVM (qemu), LXC and TemplateCT (containers). */
import type { SchemaKind } from '../contract.js'
import { finaliseGuest } from './finalise.js'
import { guestIdentity } from './identity.js'
import { guestReferences } from './references.js'
import { lxcSpecSchema, templateCtSpecSchema, templateVmSpecSchema, vmSpecSchema } from './schema.js'
import type { LxcManifest, TemplateCtManifest, TemplateVmManifest, VmManifest } from './types.js'

/** each guest kind's other spellings, kind root and description */
const OWN = {
  VM: [[], 'vm', 'A qemu virtual machine.'],
  TemplateVM: [['TVM', 'TEMPLATE'], 'templatevm', 'A qemu VM template (created, then converted with template=1).'],
  LXC: [[], 'lxc', 'An LXC container.'],
  TemplateCT: [['TCT'], 'templatect', 'An LXC container template.'],
} as const
const SPECS = {
  VM: vmSpecSchema,
  TemplateVM: templateVmSpecSchema,
  LXC: lxcSpecSchema,
  TemplateCT: templateCtSpecSchema,
}

/** the registry entry of one guest kind: its own facts, and the parts every guest kind shares */
function guestKind<const K extends keyof typeof OWN>(name: K) {
  const [aliases, root, description] = OWN[name]
  const spec: (typeof SPECS)[K] = SPECS[name]
  const shared = { guest: true, allowEmpty: true, finalise: finaliseGuest, references: guestReferences } as const
  return { name, aliases, root, description, spec, ...shared, identity: guestIdentity }
}

export const vm = guestKind('VM') satisfies SchemaKind<VmManifest>
export const templateVm = guestKind('TemplateVM') satisfies SchemaKind<TemplateVmManifest>
export const lxc = guestKind('LXC') satisfies SchemaKind<LxcManifest>
export const templateCt = guestKind('TemplateCT') satisfies SchemaKind<TemplateCtManifest>
