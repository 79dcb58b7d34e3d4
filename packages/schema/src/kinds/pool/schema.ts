/**
 * Resource pools: the `Pool` kind (pve-manager PVE::API2::Pool, user.cfg's `pool:` lines).
 * docs/schema-reference.md#pool
 */
import * as v from 'valibot'
import { issueMessage as m } from '../../errors.js'
import { obj, str } from '../../manifest/fields.js'

/** API2::Pool create_pool also wants every new level to start with a letter (the general rule: fields.ts POOL_ID) */
export const NEW_POOL_ID = /^[A-Za-z][A-Za-z0-9.\-_]*(?:\/[A-Za-z][A-Za-z0-9.\-_]*){0,2}$/

/** `spec.id` of a Pool */
const poolIdField = v.pipe(
  v.string(m('field-type', 'must be a string')),
  v.description(
    'PVE pool id; default `metadata.name`. Up to three `/`-separated levels (`web/blue`), each starting with a letter; a nested pool needs its parent to exist (declare it too).',
  ),
  v.regex(
    NEW_POOL_ID,
    m('field-invalid', 'must be a PVE pool id: up to three "/"-separated levels, each starting with a letter'),
  ),
)

const poolCommentField = v.pipe(
  str('Pool comment; ProxOps writes its ownership marker in front of it (`managed-by=proxops <comment>`).'),
  v.regex(/^[^\n\r]*$/, m('field-invalid', 'must be a single line')),
)

export const poolSpecSchema = obj(
  { id: v.optional(poolIdField), comment: v.optional(poolCommentField) },
  'Pool spec: the PVE pool id and comment.',
)
