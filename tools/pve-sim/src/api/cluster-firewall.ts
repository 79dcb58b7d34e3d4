/**
 * /cluster/firewall (pve-firewall PVE::API2::Firewall::Cluster with ClusterRules, ClusterAliases,
 * ClusterIPSetList / ClusterIPset, and PVE::API2::Firewall::Groups with GroupRules): cluster.fw's options,
 * rules, aliases, ipsets and security groups. The cluster's handlers load cluster.fw as their file and no
 * separate cluster configuration (load_config returns `(undef, $fw_conf)`), which decides how verify_rule and
 * resolve_alias treat `dc/` and `guest/` there.
 */
import type { RequestContext } from '../http/types.js'
import type { Cluster } from '../model/cluster.js'
import { fail400 } from '../model/errors.js'
import { listWithDigest, objectWithDigest, ParamError, type FwConf, type FwRule } from '../model/firewall.js'
import { FwError } from '../model/fw-addr.js'
import {
  aliasRoutes,
  assertDigest,
  collectRefs,
  ipsetRoutes,
  locked,
  rulesRoutes,
  splitList,
  type FwFile,
  type FwRuleFile,
} from './firewall-bases.js'
import { str, type RouteTable } from './params.js'

/** $cluster_option_properties */
const OPTION_KEYS = ['enable', 'ebtables', 'policy_in', 'policy_out', 'policy_forward', 'log_ratelimit']

/** Groups' $get_security_group_list */
const groupList = (conf: FwConf) =>
  [...conf.groups.keys()].sort().map((group) => {
    const comment = conf.groupComments.get(group)
    return comment ? { group, comment } : { group }
  })

/** Groups' $rename_fw_rules: every `group` rule naming the old group names the new one */
function renameGroupRules(rules: FwRule[], from: string, to: string): void {
  for (const r of rules) if (r.type === 'group' && r.action === from) r.action = to
}

export function clusterFirewallRoutes(c: Cluster): RouteTable {
  const base = '/cluster/firewall'
  const fw = c.firewalls
  const clusterFile: FwFile = {
    env: 'cluster',
    load: () => ({ conf: fw.loadCluster() }),
    save: (_ctx, conf) => fw.saveCluster(conf),
  }
  const clusterRules: FwRuleFile = {
    ...clusterFile,
    rules: (conf) => conf.rules,
    storeRules: (conf, _ctx, rules) => {
      conf.rules = rules
    },
  }
  const group = (ctx: RequestContext) => str(ctx, 'group') ?? ''
  /** GroupRules: load_config dies for a group cluster.fw does not have */
  const groupRules: FwRuleFile = {
    ...clusterFile,
    env: 'group',
    rules: (conf, ctx) => {
      const rules = conf.groups.get(group(ctx))
      if (!rules) throw new FwError(`no such security group '${group(ctx)}'`)
      return rules
    },
    storeRules: (conf, ctx, rules) => {
      conf.groups.set(group(ctx), rules)
    },
  }

  return [
    [
      'GET',
      base,
      () => [
        { name: 'aliases' },
        { name: 'rules' },
        { name: 'options' },
        { name: 'groups' },
        { name: 'ipset' },
        { name: 'macros' },
        { name: 'refs' },
      ],
    ],
    // ------------------------------------------------------------------ options (Cluster get_options / set_options)
    ['GET', `${base}/options`, () => objectWithDigest(fw.loadCluster().options).object],
    [
      'PUT',
      `${base}/options`,
      (ctx) => {
        const conf = fw.loadCluster()
        assertDigest(objectWithDigest(conf.options).digest, ctx.params.digest)
        for (const opt of splitList(ctx.params.delete)) {
          if (!OPTION_KEYS.includes(opt)) throw fail400({ delete: `no such option '${opt}'` })
          delete conf.options[opt]
        }
        for (const k of OPTION_KEYS) {
          const v = ctx.params[k]
          if (v === undefined || v === null) continue
          if (k === 'ebtables') conf.options[k] = v === true || v === 1 || v === '1' ? 1 : 0
          // the anti-lockout call: an `enable` above 1 stores the time, which reads as 0 after a minute
          else if (k === 'enable') conf.options[k] = Number(v) > 1 ? Math.floor(c.now() / 1000) : Number(v)
          else conf.options[k] = String(v)
        }
        fw.saveCluster(conf)
        return null
      },
    ],
    // ------------------------------------------------------------------ refs (Cluster refs: SDN's, none, then dc)
    ['GET', `${base}/refs`, (ctx) => collectRefs(fw.loadCluster(), str(ctx, 'type'), 'dc')],
    ...rulesRoutes(`${base}/rules`, clusterRules),
    ...aliasRoutes(`${base}/aliases`, clusterFile),
    ...ipsetRoutes(`${base}/ipset`, clusterFile),
    // ------------------------------------------------------------------ security groups (PVE::API2::Firewall::Groups)
    ['GET', `${base}/groups`, () => listWithDigest(groupList(fw.loadCluster())).list],
    [
      'POST',
      `${base}/groups`,
      (ctx) =>
        locked(() => {
          createSecurityGroup(c, ctx)
          return null
        }),
    ],
    [
      'DELETE',
      `${base}/groups/{group}`,
      (ctx) =>
        locked(() => {
          // delete_security_group refuses only a group with rules: rules naming the group are not looked at
          const conf = fw.loadCluster()
          if (groupRules.rules(conf, ctx).length) throw new FwError(`Security group '${group(ctx)}' is not empty`)
          conf.groups.delete(group(ctx))
          fw.saveCluster(conf)
          return null
        }),
    ],
    ...rulesRoutes(`${base}/groups/{group}`, groupRules),
  ]
}

/**
 * create_security_group: a new empty group, or with `rename` a comment update (rename = group) or a rename,
 * which first saves a copy under the new name, then points every guest's and the cluster's `group` rules at it
 * (each guest file rewritten as save_vmfw_conf writes it), then drops the old name. host.fw is not modelled.
 */
function createSecurityGroup(c: Cluster, ctx: RequestContext): void {
  const fw = c.firewalls
  const group = str(ctx, 'group') ?? ''
  const rename = str(ctx, 'rename')
  const comment = str(ctx, 'comment')
  const conf = fw.loadCluster()
  if (!rename) {
    if (conf.groups.has(group)) throw new ParamError({ group: `Security group '${group}' already exists` })
    conf.groups.set(group, [])
    if (comment !== undefined) conf.groupComments.set(group, comment)
    fw.saveCluster(conf)
    return
  }
  assertDigest(listWithDigest(groupList(conf)).digest, ctx.params.digest)
  const rules = conf.groups.get(rename)
  if (!rules) throw new ParamError({ group: `Security group '${rename}' does not exist` })
  if (conf.groups.has(group) && group !== rename) {
    throw new ParamError({ group: `Security group '${group}' does already exist` })
  }
  if (rename === group) {
    if (comment !== undefined) conf.groupComments.set(rename, comment)
    fw.saveCluster(conf)
    return
  }
  conf.groups.set(group, rules)
  const oldComment = conf.groupComments.get(rename)
  if (oldComment !== undefined) conf.groupComments.set(group, oldComment)
  if (comment !== undefined) conf.groupComments.set(group, comment)
  fw.saveCluster(conf)
  for (const g of [...c.guests.values()].sort((a, b) => a.vmid - b.vmid)) {
    const guestConf = fw.load(g.vmid, g.type === 'lxc' ? 'ct' : 'vm', conf)
    renameGroupRules(guestConf.rules, rename, group)
    fw.save(g.vmid, guestConf)
  }
  renameGroupRules(conf.rules, rename, group)
  conf.groups.delete(rename)
  conf.groupComments.delete(rename)
  fw.saveCluster(conf)
}
