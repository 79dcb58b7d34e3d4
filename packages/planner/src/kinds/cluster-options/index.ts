/** The cluster-options kind: datacenter.cfg through `/cluster/options` (`ClusterOptions` manifests). */
import { API_VERSION, KIND_ROOT_OF, type ClusterOptionKey } from '@proxops/schema'
import { adoptable } from '../../kit/adopt.js'
import { defineKind } from '../../kit/kind.js'
import { one } from '../../kit/privileges.js'
import { errorText } from '../../kit/text.js'
import { write } from '../../kit/runners.js'
import { CLUSTER_OPTIONS_ADDRESS, planClusterOptions } from './plan.js'
import { OPTION_KEYS, decodeClusterOption, liveClusterOption } from './fields.js'

/** values PVE reports when nothing is set: not adopted (parse_datacenter_config's defaults) */
const DEFAULTS: Partial<Record<string, string>> = { description: '', mac_prefix: 'BC:24:11' }

export const clusterOptions = defineKind({
  name: 'cluster-options',
  manifests: ['ClusterOptions'],
  addresses: (m) => (m.kind === 'ClusterOptions' ? [CLUSTER_OPTIONS_ADDRESS] : []),
  observe: (desired) => (desired.manifests.some((m) => m.kind === 'ClusterOptions') ? { clusterOptions: true } : {}),
  async read(ctx) {
    if (ctx.options.clusterOptions !== true) return {}
    const get = ctx.reader.clusterOptions.bind(ctx.reader)
    try {
      return { clusterOptions: { known: await ctx.read(() => get()) } }
    } catch (error) {
      ctx.options.signal?.throwIfAborted()
      return { clusterOptions: { unreadable: `read failed: ${errorText(error)}` } }
    }
  },
  plan: planClusterOptions,
  run: {
    setClusterOptions: async (request, { ctx }) => {
      const params = { ...request.params } as Record<string, string>
      await write('update', ctx, () => ctx.writer.setClusterOptions(params))
    },
  },
  // PVE::API2::Cluster set_options: Sys.Modify on /
  privileges: { setClusterOptions: () => [{ need: one('/', 'Sys.Modify') }] },
  async confirm(action, reader) {
    const r = action.requests[0]
    if (r?.call !== 'setClusterOptions') return undefined
    const live = await reader.clusterOptions()
    for (const [key, value] of Object.entries(r.params)) {
      const got = liveClusterOption(live, key as ClusterOptionKey)
      if (got !== String(value))
        return `datacenter option ${key} is ${JSON.stringify(got ?? '')}, not ${JSON.stringify(String(value))}`
    }
    return undefined
  },
  summary: { update: 'update' },
  adopt: {
    order: 7,
    run(live, ctx) {
      const known = adoptable(live.clusterOptions, ctx, 'datacenter options')
      if (known === undefined) return
      const spec: Record<string, unknown> = {}
      for (const [key, value] of Object.entries(known).sort(([a], [b]) => (a < b ? -1 : 1))) {
        if (DEFAULTS[key] === value.replace(/\n+$/, '')) continue
        if ((OPTION_KEYS as string[]).includes(key)) {
          const k = key as ClusterOptionKey
          spec[key] = decodeClusterOption(k, liveClusterOption(known, k) ?? value)
        } else
          ctx.collect.gaps.push({
            kind: 'ClusterOptions',
            node: '',
            id: 'datacenter',
            field: key,
            value,
            note: 'not modelled by ClusterOptions; stays on PVE as it is',
          })
      }
      if (Object.keys(spec).length === 0) return
      const name = ctx.claim('ClusterOptions', 'datacenter', 'datacenter')
      ctx.files.push({
        path: `${KIND_ROOT_OF.ClusterOptions}/${ctx.options.cluster}/${name}.yaml`,
        kind: 'ClusterOptions',
        name,
        document: { apiVersion: API_VERSION, kind: 'ClusterOptions', metadata: { name }, spec },
        incomplete: [],
      })
    },
  },
})
