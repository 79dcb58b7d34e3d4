/**
 * The ClusterOptions kind: the datacenter options of `/cluster/options` (pve-manager PVE::API2::Cluster
 * set_options, pve-cluster PVE::DataCenterConfig). One per cluster; ProxOps owns only the keys it declares.
 * docs/schema-reference.md#clusteroptions
 */
import * as v from 'valibot'
import { issueMessage as m } from '../../errors.js'
import { bool, int, list, obj, str } from '../../manifest/fields.js'
import { CLUSTER_OPTIONS, type ClusterOptionForm } from './options.js'

const scalar = v.union([v.string(), v.number(), v.boolean()], m('field-type', 'must be a string, number or true/false'))

function optionSchema(form: ClusterOptionForm, description: string): v.GenericSchema {
  switch (form) {
    case 'bool':
      return bool(description)
    case 'int':
      return int(description, 1)
    case 'list':
      return list(v.string(m('field-type', 'must be a string')), description)
    case 'map':
      return v.pipe(v.record(v.string(), scalar, m('field-type', 'must be a mapping')), v.description(description))
    default:
      return str(description)
  }
}

export const clusterOptionsSpecSchema = obj(
  Object.fromEntries(
    Object.entries(CLUSTER_OPTIONS).map(([k, o]) => [
      k,
      v.optional(optionSchema(o.form, `${o.description} PVE \`${k}\`.`)),
    ]),
  ) as Record<keyof typeof CLUSTER_OPTIONS, v.OptionalSchema<v.GenericSchema, undefined>>,
  'Datacenter options as PVE names them; only the declared keys are owned (removing one leaves it on PVE as it is).',
)
