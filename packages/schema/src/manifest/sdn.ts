/**
 * What the SDN kinds (Zone, VNet, Subnet, SdnController) share: pve-network's id rules (parse_sdn_zone_id,
 * parse_sdn_vnet_id, parse_sdn_controller_id) and `spec.id` defaulting to `metadata.name`. docs/network.md
 */
import { idIdentity, type Add, type Identity, type PathKey } from '../kinds/contract.js'

export interface SdnIdRule {
  /** how PVE names the object in its message (`zone`, `vnet`, `controller`) */
  what: string
  re: RegExp
  max: number
}

export const ZONE_ID: SdnIdRule = { what: 'zone', re: /^[a-z][a-z0-9]*[a-z0-9]$/i, max: 8 }
export const VNET_ID: SdnIdRule = { what: 'vnet', re: /^[a-z][a-z0-9]*[a-z0-9]$/i, max: 8 }
export const CONTROLLER_ID: SdnIdRule = { what: 'controller', re: /^[a-z][a-z0-9_-]*[a-z0-9]$/i, max: 64 }

/** the problem PVE would name for this id, or undefined */
export function sdnIdProblem(rule: SdnIdRule, id: string): string | undefined {
  if (!rule.re.test(id))
    return `${JSON.stringify(id)} cannot be a PVE ${rule.what} id: a letter, then letters or digits${rule === CONTROLLER_ID ? ', "-" or "_"' : ''}, ending in a letter or digit (at least 2 characters)`
  if (id.length > rule.max)
    return `${JSON.stringify(id)} cannot be a PVE ${rule.what} id: at most ${rule.max} characters`
  return undefined
}

/** `spec.id` defaults to `metadata.name`; the effective id must pass the rule (the problem on the field that set it) */
export function finaliseSdnId(
  m: { metadata: { name: string }; spec: { id?: string } },
  rule: SdnIdRule,
  add: Add,
): string {
  const declared = m.spec.id !== undefined
  const id = m.spec.id ?? m.metadata.name
  const problem = sdnIdProblem(rule, id)
  const path: PathKey[] = declared ? ['spec', 'id'] : ['metadata', 'name']
  if (problem) add('field-invalid', path, declared ? problem : `${problem}; set spec.id`)
  m.spec.id = id
  return id
}

/** the one PVE object an SDN manifest with an id declares (`what`: `zone`, `vnet`, `controller`) */
export function sdnIdentity(
  key: string,
  what: string,
  m: { metadata: { name: string }; spec: { id: string } },
): Identity[] {
  return idIdentity(key, `PVE SDN ${what} id ${JSON.stringify(m.spec.id)}`, m, 'sdn-id-duplicate')
}
