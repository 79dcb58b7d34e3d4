/**
 * The simulator commands of getting started stand in for the example repository's clusters: each names the endpoint
 * and the nodes of one cluster config of examples/repository/, and starts a simulator with those nodes.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { repoRoot } from './sandbox.js'

interface Documented {
  args: string[]
  cluster: string
  url: string
  nodes: string[]
}

/** `pnpm sim [args]   # <cluster>: <url>, node(s) a, b` lines of a page. */
function documented(page: string): Documented[] {
  const text = readFileSync(path.join(repoRoot, page), 'utf8')
  return [...text.matchAll(/^pnpm sim((?: [^#\s]+)*) +# ([a-z0-9-]+): (https:\/\/\S+), nodes? ([\w, -]+)$/gm)].map(
    (m) => ({
      args: m[1]!.trim().split(/\s+/).filter(Boolean),
      cluster: m[2]!,
      url: m[3]!,
      nodes: m[4]!.split(/,\s*/),
    }),
  )
}

function exampleCluster(name: string): { url: string; nodes: string[] } {
  const text = readFileSync(path.join(repoRoot, 'examples/repository/clusters', name, 'config.yaml'), 'utf8')
  return {
    url: /^\s*base-url: (\S+)/m.exec(text)?.[1] ?? '',
    nodes: (/^\s*nodes: \[([^\]]*)\]/m.exec(text)?.[1] ?? '').split(/,\s*/),
  }
}

/** Starts the built simulator with `args` (the port replaced by a free one) and reads its banner. */
function banner(args: string[]): Promise<{ nodes: string[]; url: string }> {
  const certs = mkdtempSync(path.join(tmpdir(), 'proxops-sim-cmd-'))
  const port = args.indexOf('--port')
  const run = port >= 0 ? [...args.slice(0, port), ...args.slice(port + 2)] : args
  const child = spawn(
    process.execPath,
    [path.join(repoRoot, 'tools/pve-sim/dist/main.js'), '--cert-dir', certs, ...run, '--port', '0', '--json'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString()
      if (!out.includes('\n')) return
      child.kill('SIGTERM')
      rmSync(certs, { recursive: true, force: true })
      resolve(JSON.parse(out.split('\n')[0]!) as { nodes: string[]; url: string })
    })
    child.on('error', reject)
  })
}

describe('getting started: the simulators of the example clusters', () => {
  const commands = documented('docs/getting-started.md')

  it('one command per cluster of the example repository, naming its endpoint and nodes', () => {
    const clusters = readdirSync(path.join(repoRoot, 'examples/repository/clusters')).sort()
    expect(commands.map((c) => c.cluster).sort()).toEqual(clusters)
    for (const c of commands) {
      expect({ url: c.url, nodes: c.nodes }, c.cluster).toEqual(exampleCluster(c.cluster))
      // what the command asks the simulator for is what the config needs
      const port = c.args.includes('--port') ? c.args[c.args.indexOf('--port') + 1] : '8006'
      expect(new URL(c.url).port, c.cluster).toBe(port)
    }
  })

  it('each command starts a simulator with those nodes', async () => {
    for (const c of commands) expect((await banner(c.args)).nodes, c.cluster).toEqual(c.nodes)
  })
})
