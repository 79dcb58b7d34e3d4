/** Builds throw-away repositories in a temp directory for loader tests. */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

export interface TempRepo {
  /** the temp directory; the repository root is `root` inside it (so "outside the root" exists) */
  dir: string
  root: string
  write(path: string, content: string): void
  link(path: string, target: string): void
  mkdir(path: string): void
  cleanup(): void
}

export function tempRepo(files: Record<string, string> = {}): TempRepo {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'proxops-schema-')))
  const root = join(dir, 'repo')
  mkdirSync(root)
  const repo: TempRepo = {
    dir,
    root,
    write(path, content) {
      const p = join(root, path)
      mkdirSync(dirname(p), { recursive: true })
      writeFileSync(p, content)
    },
    link(path, target) {
      const p = join(root, path)
      mkdirSync(dirname(p), { recursive: true })
      symlinkSync(target, p)
    },
    mkdir(path) {
      mkdirSync(join(root, path), { recursive: true })
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true })
    },
  }
  for (const [path, content] of Object.entries(files)) repo.write(path, content)
  return repo
}

export const clusterConfig = (
  name: string,
  nodes = ['pve1', 'pve2'],
  url = `https://${name}.example.invalid:8006`,
): string => `pve:\n  clusters:\n    ${name}:\n      base-url: ${url}\n      nodes: [${nodes.join(', ')}]\n`

export const vmYaml = (name: string, vmid: number, node = 'pve1', extra = ''): string =>
  `apiVersion: proxops/v1alpha1\nkind: VM\nmetadata:\n  name: ${name}\nspec:\n  node: ${node}\n  vmid: ${vmid}\n  memory: 1GiB\n  cpu: {type: host, cores: 1}\n  disks: [{storage: local-lvm, size: 8GiB}]\n${extra}`

export const isoYaml = (name: string, nodes = ['pve1']): string =>
  `apiVersion: proxops/v1alpha1\nkind: ISO\nmetadata:\n  name: ${name}\nspec:\n  nodes: [${nodes.join(', ')}]\n  storage: local\n  filename: ${name}.iso\n  url: https://downloads.example.invalid/${name}.iso\n`
