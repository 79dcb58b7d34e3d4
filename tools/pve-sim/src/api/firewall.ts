import type { RequestContext } from '../http/types.js'
import type { Cluster } from '../model/cluster.js'
import { fail400 } from '../model/errors.js'
import { objectWithDigest, type RuleEnv } from '../model/firewall.js'
import {
  aliasRoutes,
  assertDigest,
  collectRefs,
  ipsetRoutes,
  locked,
  rulesRoutes,
  splitList,
  type FwRuleFile,
} from './firewall-bases.js'
import { clusterFirewallRoutes } from './cluster-firewall.js'
import { int, str, type RouteTable } from './params.js'

/** vm_option_properties: the keys PUT .../firewall/options takes */
const OPTION_KEYS = [
  'enable',
  'macfilter',
  'dhcp',
  'ndp',
  'radv',
  'ipfilter',
  'policy_in',
  'policy_out',
  'log_level_in',
  'log_level_out',
]
const BOOL_OPTIONS = new Set(['enable', 'macfilter', 'dhcp', 'ndp', 'radv', 'ipfilter'])

/** every firewall route: the guests' and the cluster's */
export function firewallRoutes(c: Cluster): RouteTable {
  return [...guestFirewallRoutes(c), ...clusterFirewallRoutes(c)]
}

/**
 * /nodes/{node}/{qemu|lxc}/{vmid}/firewall (pve-firewall PVE::API2::Firewall::VM / CT with VMRules / CTRules,
 * VMAliases / CTAliases, VMIPSetList / VMIPset, and the option and refs handlers of VMBase). Every handler
 * loads cluster.fw first (load_config), so `dc/` names resolve against it. As in PVE nothing checks that the
 * guest exists: a missing file reads as an empty configuration.
 */
function guestFirewallRoutes(c: Cluster): RouteTable {
  const table: RouteTable = []
  for (const type of ['qemu', 'lxc'] as const) {
    const env: RuleEnv = type === 'qemu' ? 'vm' : 'ct'
    const base = `/nodes/{node}/${type}/{vmid}/firewall`
    const vmid = (ctx: RequestContext) => int(ctx, 'vmid') ?? 0
    const file: FwRuleFile = {
      env,
      load: (ctx) => {
        const cluster = c.firewalls.loadCluster()
        return { cluster, conf: c.firewalls.load(vmid(ctx), env, cluster) }
      },
      save: (ctx, conf) => c.firewalls.save(vmid(ctx), conf),
      rules: (conf) => conf.rules,
      storeRules: (conf, _ctx, rules) => {
        conf.rules = rules
      },
    }

    table.push(
      [
        'GET',
        base,
        () => [{ name: 'rules' }, { name: 'aliases' }, { name: 'ipset' }, { name: 'refs' }, { name: 'options' }],
      ],
      // ------------------------------------------------------------------ options (VMBase get_options / set_options)
      [
        'GET',
        `${base}/options`,
        (ctx) => {
          c.requireNode(str(ctx, 'node') ?? '')
          return objectWithDigest(file.load(ctx).conf.options).object
        },
      ],
      [
        'PUT',
        `${base}/options`,
        (ctx) => {
          c.requireNode(str(ctx, 'node') ?? '')
          const { conf } = file.load(ctx)
          assertDigest(objectWithDigest(conf.options).digest, ctx.params.digest)
          for (const opt of splitList(ctx.params.delete)) {
            if (!OPTION_KEYS.includes(opt)) throw fail400({ delete: `no such option '${opt}'` })
            delete conf.options[opt]
          }
          for (const k of OPTION_KEYS) {
            const v = ctx.params[k]
            if (v === undefined || v === null) continue
            conf.options[k] = BOOL_OPTIONS.has(k) ? (v === true || v === 1 || v === '1' ? 1 : 0) : String(v)
          }
          file.save(ctx, conf)
          return null
        },
      ],
      ...rulesRoutes(`${base}/rules`, file),
      ...aliasRoutes(`${base}/aliases`, file),
      ...ipsetRoutes(`${base}/ipset`, file),
      // ------------------------------------------------------------------ refs (VMBase refs)
      [
        'GET',
        `${base}/refs`,
        (ctx) =>
          locked(() => {
            // cluster.fw's, then the SDN's (not modelled: none), then the guest's own
            const cluster = c.firewalls.loadCluster()
            const want = str(ctx, 'type')
            const own = c.firewalls.load(vmid(ctx), env, cluster)
            return [...collectRefs(cluster, want, 'dc'), ...collectRefs(own, want, 'guest')]
          }),
      ],
    )
  }
  return table
}
