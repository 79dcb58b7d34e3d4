/**
 * Each kind's whole manifest schema: the envelope around the kind's spec schema (kinds/<kind>/schema.ts). The
 * kinds' schemas check shapes, types and single-field rules and convert quantities; `parseManifest`
 * (manifest/parse.ts) then applies the kind's cross-field rules and context defaults (its finalise).
 */
import { envelope } from './envelope.js'
import { KINDS, type Kind, schemaKind } from '../kinds.js'
import type { SCHEMA_KINDS } from '../kinds/registry.js'

type Entry = (typeof SCHEMA_KINDS)[number]
type ManifestSchemas = { [K in Kind]: ReturnType<typeof envelope<Extract<Entry, { name: K }>['spec']>> }

export const manifestSchemas = Object.fromEntries(
  KINDS.map((k) => [k, envelope(schemaKind(k).spec, schemaKind(k).description)]),
) as ManifestSchemas
