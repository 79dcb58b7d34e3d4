/**
 * PVE's `requires` rules for every request ProxOps sends: the one table of which parameter PVE accepts only
 * together with another (pve-common PVE::JSONSchema check_object: `missing property required by 'x'`, a 400).
 * The manifest checks (`notes-template` with `storage`, a gateway with its address, `spec.extra`) and the
 * planner's requests (an update that changes one of such a pair sends the other too) read it here.
 *
 * Every endpoint ProxOps writes is a key, with an empty rule set where PVE has none, so that a new endpoint
 * without an entry is noticed. `pve-requires.test.ts` pins the table against PVE's API schema (apidoc.json,
 * 9.1 and 8.4): the API-level rules must be exactly PVE's. Rules inside a property string (`ipconfig[n]`'s
 * `gw` requires `ip`) are checked by PVE's parse_property_string too, but the API schema names such a format
 * without expanding it: those are listed under `FORMAT_REQUIRES`, from the format's definition in PVE's source.
 */

/** `METHOD /path/{template}` as PVE's API schema writes it */
export type PveEndpoint = `${'POST' | 'PUT' | 'DELETE'} /${string}`

/** parameter -> the parameter PVE requires with it */
export type RequiresRules = Readonly<Record<string, string>>

const none: RequiresRules = {}

/** the endpoints of both guest types (qemu-server, pve-container) with their rules */
function guestEndpoints(): Record<PveEndpoint, RequiresRules> {
  const out: Record<PveEndpoint, RequiresRules> = {}
  for (const t of ['qemu', 'lxc'] as const) {
    const g = `/nodes/{node}/${t}/{vmid}`
    const fw = `${g}/firewall`
    Object.assign(out, {
      // create_vm: `force` and `unique` are restore options (qemu-server); pve-container's `unique` likewise
      [`POST /nodes/{node}/${t}`]: t === 'qemu' ? { force: 'archive', unique: 'archive' } : { unique: 'restore' },
      [`POST ${g}/clone`]: none,
      [`PUT ${g}/config`]: t === 'qemu' ? { force: 'delete' } : none,
      [`PUT ${g}/resize`]: none,
      [`POST ${g}/status/start`]: none,
      [`POST ${g}/status/stop`]: none,
      [`POST ${g}/status/shutdown`]: none,
      [`POST ${g}/status/reboot`]: none,
      [`POST ${g}/template`]: none,
      [`POST ${g}/snapshot`]: none,
      [`DELETE ${g}/snapshot/{snapname}`]: none,
      [`DELETE ${g}`]: none,
      [`PUT ${fw}/options`]: none,
      [`POST ${fw}/rules`]: none,
      [`PUT ${fw}/rules/{pos}`]: none,
      [`DELETE ${fw}/rules/{pos}`]: none,
      [`POST ${fw}/aliases`]: none,
      [`PUT ${fw}/aliases/{name}`]: none,
      [`DELETE ${fw}/aliases/{name}`]: none,
      [`POST ${fw}/ipset`]: none,
      [`POST ${fw}/ipset/{name}`]: none,
      [`DELETE ${fw}/ipset/{name}`]: none,
      [`PUT ${fw}/ipset/{name}/{cidr}`]: none,
      [`DELETE ${fw}/ipset/{name}/{cidr}`]: none,
    })
  }
  // qemu's asynchronous config write (a task); lxc has only the PUT
  out['POST /nodes/{node}/qemu/{vmid}/config'] = { force: 'delete' }
  return out
}

/** The requires rules of every endpoint ProxOps writes (pve-common JSONSchema `requires`, per the API schema). */
export const PVE_REQUIRES: Readonly<Record<PveEndpoint, RequiresRules>> = {
  ...guestEndpoints(),
  // pve-storage PVE::API2::Storage::Status download_url: the checksum and its algorithm go together
  'POST /nodes/{node}/storage/{storage}/download-url': {
    checksum: 'checksum-algorithm',
    'checksum-algorithm': 'checksum',
  },
  // pve-ha-manager: resources, groups (8.x) and rules (9.x) have none
  'POST /cluster/ha/resources': none,
  'PUT /cluster/ha/resources/{sid}': none,
  'DELETE /cluster/ha/resources/{sid}': none,
  'POST /cluster/ha/groups': none,
  'PUT /cluster/ha/groups/{group}': none,
  'DELETE /cluster/ha/groups/{group}': none,
  'POST /cluster/ha/rules': none,
  'PUT /cluster/ha/rules/{rule}': none,
  'DELETE /cluster/ha/rules/{rule}': none,
  // pve-manager PVE::API2::Backup: the job options are PVE::VZDump's (`dow` is the old form of `schedule`,
  // which ProxOps never sends; `notes-template` and `protected` need the target `storage`)
  'POST /cluster/backup': { dow: 'starttime', 'notes-template': 'storage', protected: 'storage' },
  'PUT /cluster/backup/{id}': { dow: 'starttime', 'notes-template': 'storage', protected: 'storage' },
  'DELETE /cluster/backup/{id}': none,
  // pve-manager PVE::API2::Pool
  'POST /pools': none,
  'PUT /pools': none,
  'DELETE /pools': none,
}

/**
 * Rules inside property strings ProxOps writes, which PVE checks when it parses the value but its API schema
 * does not show (it names the format): qemu-server's `pve-qm-ipconfig` (`gw` needs `ip`, `gw6` needs `ip6`).
 */
export const FORMAT_REQUIRES = {
  'pve-qm-ipconfig': { gw: 'ip', gw6: 'ip6' },
} as const satisfies Readonly<Record<string, RequiresRules>>

/** The rules of one endpoint ProxOps writes; an endpoint the table does not list is a programming error. */
export function requiresOf(endpoint: PveEndpoint): RequiresRules {
  const rules = PVE_REQUIRES[endpoint]
  if (rules === undefined) throw new Error(`${endpoint} is not in PVE_REQUIRES: add it with PVE's requires rules`)
  return rules
}

/** A parameter whose required partner is missing from the same request (what PVE would answer with a 400). */
export interface UnmetRequire {
  param: string
  requires: string
}

/** The rules `params` breaks (empty when PVE's `requires` checks pass), in parameter order. */
export function unmetRequires(rules: RequiresRules, params: Readonly<Record<string, unknown>>): UnmetRequire[] {
  const present = (k: string): boolean => params[k] !== undefined && params[k] !== null
  return Object.keys(params)
    .sort()
    .flatMap((param) => {
      const requires = rules[param]
      return requires !== undefined && present(param) && !present(requires) ? [{ param, requires }] : []
    })
}

/**
 * The parameters `params` needs for its rules to hold, taken from `from` (what the manifest owns): an update that
 * changes `notes-template` also sends the job's `storage`, which PVE checks on every request, not on the merged
 * job. Parameters `from` lacks are left missing (unmetRequires reports them).
 */
export function withRequired(
  rules: RequiresRules,
  params: Readonly<Record<string, string>>,
  from: Readonly<Record<string, string>>,
): Record<string, string> {
  const out = { ...params }
  // a required parameter may itself require another: follow the chain until nothing changes
  for (let changed = true; changed;) {
    changed = false
    for (const { requires } of unmetRequires(rules, out)) {
      const value = from[requires]
      if (value === undefined) continue
      out[requires] = value
      changed = true
    }
  }
  return out
}
