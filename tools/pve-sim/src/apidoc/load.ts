/**
 * Finds and reads the PVE API schema at run time. The schema is AGPL data and is never copied into this
 * repository: it is read from `PROXOPS_PVE_APIDOC` or from `../shared/pve-api/` next to the repository root.
 */
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export type PveVersion = '9.1' | '8.4'

/** One apidoc method (`info.GET` etc.); only the fields the simulator reads are typed. */
export interface ApiMethodInfo {
  name?: string
  method?: string
  protected?: number | string
  proxyto?: string
  allowtoken?: number | string
  /** absent on a few methods: then only root@pam itself may call them (not even its tokens) */
  permissions?: { user?: string; check?: unknown[]; description?: string }
  parameters?: { additionalProperties?: number | string; properties?: Record<string, SchemaProp> }
}

/** A schema property as apidoc.json writes it (sloppy types included: `"minimum":"0"`, `"optional":"1"`). */
export interface SchemaProp {
  type?: string
  format?: string | Record<string, SchemaProp>
  pattern?: string
  enum?: string[] | null
  minimum?: number | string
  maximum?: number | string
  minLength?: number | string
  maxLength?: number | string
  optional?: number | string | boolean
  default_key?: number | string
  alias?: string
  keyAlias?: string
  requires?: string | Record<string, unknown>
  description?: string
  items?: SchemaProp
  properties?: Record<string, SchemaProp>
  additionalProperties?: number | string | boolean
}

export interface ApiNode {
  path: string
  info?: Partial<Record<'GET' | 'POST' | 'PUT' | 'DELETE', ApiMethodInfo>>
  children?: ApiNode[]
}

export type ApidocLoad = { ok: true; tree: ApiNode[]; file: string } | { ok: false; warning: string }

/** The monorepo root: the nearest ancestor holding pnpm-workspace.yaml. */
export function findRepoRoot(start: string = dirname(fileURLToPath(import.meta.url))): string | undefined {
  let dir = resolve(start)
  for (;;) {
    if (existsSync(join(dir, 'pnpm-workspace.yaml'))) return dir
    const up = dirname(dir)
    if (up === dir) return undefined
    dir = up
  }
}

export function apidocCandidates(version: PveVersion, env: NodeJS.ProcessEnv = process.env): string[] {
  const name = version === '8.4' ? 'apidoc-pve8.json' : 'apidoc.json'
  const out: string[] = []
  const fromEnv = env.PROXOPS_PVE_APIDOC
  if (fromEnv) out.push(version === '8.4' ? join(dirname(fromEnv), name) : fromEnv)
  const root = findRepoRoot()
  if (root) out.push(join(root, '..', 'shared', 'pve-api', name))
  return out
}

/**
 * The schema as JSON (apidoc.json), or as the viewer script every PVE node ships
 * (`/usr/share/pve-docs/api-viewer/apidoc.js`: `const apiSchema = [...];` followed by the viewer's code).
 */
export function parseApidocText(text: string): unknown {
  const assignment = /\bapiSchema\s*=\s*\[/.exec(text)
  if (!assignment) return JSON.parse(text)
  const start = assignment.index + assignment[0].length - 1
  // the array ends at one of the `];` after it (a `]` inside a string may look the same): the first that parses
  for (const end of text.slice(start).matchAll(/\]\s*;/g)) {
    try {
      return JSON.parse(text.slice(start, start + end.index + 1))
    } catch {
      // not the end yet
    }
  }
  throw new Error('the apiSchema array does not end')
}

const loaded = new Map<string, ApiNode[]>()

export function loadApidoc(version: PveVersion, env: NodeJS.ProcessEnv = process.env): ApidocLoad {
  const candidates = apidocCandidates(version, env)
  for (const file of candidates) {
    if (!existsSync(file)) continue
    let tree = loaded.get(file)
    if (!tree) {
      try {
        tree = parseApidocText(readFileSync(file, 'utf8')) as ApiNode[]
      } catch (err) {
        return {
          ok: false,
          warning: `${file}: not a readable apidoc JSON file (${(err as Error).message}); schema checks are off`,
        }
      }
      if (!Array.isArray(tree))
        return { ok: false, warning: `${file}: expected a JSON array of API nodes; schema checks are off` }
      loaded.set(file, tree)
    }
    return { ok: true, tree, file }
  }
  return {
    ok: false,
    warning: `PVE ${version} API schema not found (looked in: ${candidates.join(', ') || 'nowhere'}; set PROXOPS_PVE_APIDOC); schema checks are off`,
  }
}
