/** The envelope every manifest shares: apiVersion, kind, metadata, and the kind's spec. */
import * as v from 'valibot'
import { issueMessage as m } from '../errors.js'
import { obj, resourceName, scalarString, str } from './fields.js'

export const API_VERSION = 'proxops/v1alpha1'

export const metadataSchema = obj(
  {
    name: resourceName(
      'Identity within a kind and cluster: lowercase letters and digits with single "-" separators, at most 63 characters.',
    ),
    namespace: v.optional(str('Informational only.')),
    labels: v.optional(
      v.pipe(
        v.record(v.string(), scalarString, m('field-type', 'must be a mapping of strings')),
        v.description('Free-form, informational labels.'),
      ),
      {},
    ),
    annotations: v.optional(
      v.pipe(
        v.record(v.string(), scalarString, m('field-type', 'must be a mapping of strings')),
        v.description(
          'Free-form annotations. `proxops/depends-on: "Kind:name,Kind:name"` adds dependencies; `proxops/disruption: none|hotplug|reboot|stop` caps how disruptive an applied change may be; `proxops/safety-snapshots: "true"|"false"` turns safety snapshots on or off for a guest, whatever its cluster says; `proxops/suspend: "<reason>"` suspends the object (read and shown with its drift, never written); `proxops/prune: never` keeps ProxOps from ever deleting it; `proxops/ignore-fields: "spec.memory, ..."` names fields whose live values are never compared (guests).',
        ),
      ),
      {},
    ),
  },
  'Name and informational metadata.',
)

/** The whole manifest schema of a kind: the shared envelope around its spec schema. */
export const envelope = <S extends v.GenericSchema>(spec: S, description: string) =>
  obj(
    {
      apiVersion: v.pipe(
        v.literal(API_VERSION, m('api-version', `apiVersion must be "${API_VERSION}"`)),
        v.description(`Always \`${API_VERSION}\`.`),
      ),
      kind: v.pipe(
        v.string(m('field-type', 'must be a string')),
        v.description('Kind (case-insensitive; aliases accepted).'),
      ),
      metadata: metadataSchema,
      spec,
    },
    description,
  )
