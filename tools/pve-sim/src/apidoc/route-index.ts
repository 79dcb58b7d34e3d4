/**
 * Path templates of the apidoc tree (`/nodes/{node}/qemu/{vmid}/config`) indexed for matching request paths.
 * Like PVE's RESTHandler the path is URI-unescaped before it is split, static segments
 * win over `{param}` segments, and a trailing `{volume}` or `{cidr}` takes the rest of the path (their handlers use an
 * empty fragment delimiter, so `local:iso/x.iso` and `10.0.0.0/24` may arrive with a literal slash).
 */
import type { ApiMethodInfo, ApiNode } from './load.js'

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE'

interface TrieNode {
  statics: Map<string, TrieNode>
  param?: { name: string; node: TrieNode }
  template?: string
  methods: Partial<Record<HttpMethod, ApiMethodInfo>>
}

export interface RouteMatch {
  template: string
  pathParams: Record<string, string>
  /** undefined when the template exists but not for this method */
  info: ApiMethodInfo | undefined
}

const REST_PARAMS = new Set(['volume', 'cidr'])

function newNode(): TrieNode {
  return { statics: new Map(), methods: {} }
}

/** `%XX` escapes decoded as UTF-8 bytes, everything else kept (Perl's uri_unescape). */
export function uriUnescape(s: string): string {
  if (!s.includes('%')) return s
  return s.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
    const bytes = Buffer.from(run.replace(/%/g, ''), 'hex')
    return bytes.toString('utf8')
  })
}

export class RouteIndex {
  private readonly root = newNode()
  readonly templates: string[] = []

  static fromTree(tree: ApiNode[]): RouteIndex {
    const index = new RouteIndex()
    const walk = (n: ApiNode): void => {
      index.add(n.path, n.info ?? {})
      for (const c of n.children ?? []) walk(c)
    }
    for (const n of tree) walk(n)
    return index
  }

  /** Adds a template; also used for routes a model serves that the schema lacks. */
  add(template: string, methods: Partial<Record<HttpMethod, ApiMethodInfo>>): void {
    let node = this.root
    for (const seg of template.split('/').filter(Boolean)) {
      const p = /^\{([^}]+)\}$/.exec(seg)
      if (p) {
        const name = p[1] as string
        node.param ??= { name, node: newNode() }
        node = node.param.node
      } else {
        let next = node.statics.get(seg)
        if (!next) {
          next = newNode()
          node.statics.set(seg, next)
        }
        node = next
      }
    }
    if (node.template === undefined) this.templates.push(template)
    node.template = template
    node.methods = { ...node.methods, ...methods }
  }

  /** `relPath` is the path below `/api2/json`, still percent-encoded. */
  match(method: HttpMethod, relPath: string): RouteMatch | undefined {
    const segs = uriUnescape(relPath).split('/').filter(Boolean)
    const params: Record<string, string> = {}
    const found = this.walk(this.root, segs, 0, params)
    if (!found || found.template === undefined) return undefined
    return { template: found.template, pathParams: params, info: found.methods[method] }
  }

  private walk(node: TrieNode, segs: string[], i: number, params: Record<string, string>): TrieNode | undefined {
    if (i === segs.length) return node.template !== undefined ? node : undefined
    const seg = segs[i] as string
    const st = node.statics.get(seg)
    if (st) {
      const r = this.walk(st, segs, i + 1, params)
      if (r) return r
    }
    if (node.param) {
      const { name, node: child } = node.param
      if (REST_PARAMS.has(name) && child.template !== undefined && child.statics.size === 0 && !child.param) {
        params[name] = segs.slice(i).join('/')
        return child
      }
      params[name] = seg
      const r = this.walk(child, segs, i + 1, params)
      if (r) return r
      delete params[name]
    }
    return undefined
  }
}
