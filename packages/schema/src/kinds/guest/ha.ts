/**
 * `spec.ha` of VM and LXC: the guest as a PVE HA resource (pve-ha-manager `/cluster/ha/resources`, sid
 * `vm:<vmid>` / `ct:<vmid>`), with an optional node preference that ProxOps writes in the form the PVE version
 * has: an HA group on 8.x, a node-affinity rule on 9.x (docs/schema-reference.md#ha).
 */
import * as v from 'valibot'
import { issueMessage as m } from '../../errors.js'
import { bool, int, oneOf } from '../../manifest/fields.js'
import type { Add } from '../contract.js'
import type { Out } from '../../manifest/infer.js'

/** the resource's requested state (PVE::HA::Resources `state`; `enabled` is PVE's alias of `started`) */
export const HA_STATES = ['started', 'stopped', 'disabled', 'ignored'] as const
export type HaState = (typeof HA_STATES)[number]

export const haSchema = v.pipe(
  v.strictObject(
    {
      state: v.optional(
        oneOf(
          HA_STATES,
          'Requested HA state; absent = `spec.state`. `disabled` stops the guest and keeps it stopped; `ignored` leaves the guest to ProxOps power actions.',
        ),
      ),
      max_restart: v.optional(int('Restarts on the same node after a failed start (`max_restart`).', 0, 10), 1),
      max_relocate: v.optional(int('Relocations to another node after failed restarts (`max_relocate`).', 0, 10), 1),
      nodes: v.optional(
        v.pipe(
          v.record(
            v.string(),
            int('Priority of the node; higher is preferred.', 0, 1000),
            m('field-type', 'must be a mapping of node names to priorities'),
          ),
          v.description(
            'Node preference: node name -> priority. Written as an HA group on PVE 8 and a node-affinity rule on PVE 9; `spec.node` must be one of the highest-priority nodes.',
          ),
        ),
      ),
      strict: v.optional(bool('Run only on the listed nodes (group `restricted`, rule `strict`).'), false),
    },
    (issue) =>
      issue.expected === 'never' ? 'unknown key' : m('field-type', `must be a mapping, got ${issue.received}`),
  ),
  v.description('Make the guest an HA resource; its power state is then requested through HA.'),
)

/** `spec.ha` of a VM or LXC */
export type HaSpec = Out<typeof haSchema>

/**
 * Cross-field rules: the requested state agrees with `spec.state`, the preference names the guest's own node
 * among its highest priorities (else the CRM would move the guest off the node ProxOps declares), and nodes
 * are plain node names.
 */
export function checkHa(kind: string, ha: HaSpec, state: 'started' | 'stopped', node: string, add: Add): void {
  if (kind === 'TemplateVM' || kind === 'TemplateCT') {
    add('field-invalid', ['spec', 'ha'], `a ${kind} cannot be an HA resource: remove spec.ha`)
    return
  }
  const want = ha.state
  if (want === 'started' && state !== 'started')
    add('field-invalid', ['spec', 'ha', 'state'], 'ha.state started needs spec.state: started')
  if ((want === 'stopped' || want === 'disabled') && state !== 'stopped')
    add('field-invalid', ['spec', 'ha', 'state'], `ha.state ${want} needs spec.state: stopped`)
  if (ha.nodes === undefined) {
    if (ha.strict) add('field-invalid', ['spec', 'ha', 'strict'], 'strict needs ha.nodes')
    return
  }
  const entries = Object.entries(ha.nodes)
  if (entries.length === 0) {
    add('field-invalid', ['spec', 'ha', 'nodes'], 'name at least one node, or remove ha.nodes')
    return
  }
  for (const [n] of entries)
    if (!/^[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?$/.test(n))
      add('field-invalid', ['spec', 'ha', 'nodes', n], `${JSON.stringify(n)} is not a PVE node name`)
  const top = Math.max(...entries.map(([, p]) => p))
  if (ha.nodes[node] !== top)
    add(
      'field-invalid',
      ['spec', 'ha', 'nodes'],
      `spec.node ${node} must be listed with the highest priority (${top}); HA would move the guest to the node it prefers`,
    )
}
