/**
 * Test harness for the reliability suites: a small but complete repository (artifacts, a template,
 * a clone, VMs, a container) in a temporary git work tree, pointed at a running simulator, and a
 * runner for the real CLI binary.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Simulator } from '@proxops/pve-sim'
import { createPveClient, type PveClient } from '@proxops/pve-client'

export const cliBin = fileURLToPath(new URL('../../../packages/cli/dist/bin.js', import.meta.url))

/** one manifest document of `kind` named `name`; `spec` is its YAML body, indented here */
export const doc = (kind: string, name: string, spec: string): string =>
  `apiVersion: proxops/v1alpha1\nkind: ${kind}\nmetadata:\n  name: ${name}\nspec:\n${spec.replace(/^/gm, '  ')}\n`

/** The desired guests of the harness repository, by vmid. */
export const DESIRED_VMIDS = [300, 301, 302, 303, 310, 320, 9000]

export const FILES: Record<string, string> = {
  'ctt/c/debian.yaml': doc(
    'CTTemplate',
    'debian-12-standard',
    'nodes: [pve1, pve2]\nstorage: local\nfilename: debian-12-standard_12.7-1_amd64.tar.zst\nurl: https://downloads.example.invalid/debian-12-standard_12.7-1_amd64.tar.zst',
  ),
  'diskimage/c/cloud.yaml': doc(
    'DiskImage',
    'debian-cloud',
    'nodes: [pve1]\nstorage: local\nfilename: debian-12-genericcloud-amd64.qcow2\nurl: https://downloads.example.invalid/debian-12-genericcloud-amd64.qcow2',
  ),
  'templatevm/c/tpl.yaml': doc(
    'TemplateVM',
    'tpl',
    'node: pve1\nvmid: 9000\nstate: stopped\nmemory: 1GiB\ncpu: {type: x86-64-v2-AES, cores: 1}\ndisks:\n  - {storage: local-lvm, image: debian-cloud}\nnetworks:\n  - {bridge: vmbr0}\ntags: [tpl]',
  ),
  'vm/c/clone.yaml': doc(
    'VM',
    'from-tpl',
    'node: pve1\nvmid: 310\nmemory: 1GiB\ncpu: {type: x86-64-v2-AES, cores: 1}\nclone: tpl\nnetworks:\n  - {bridge: vmbr0}',
  ),
  'vm/c/vms.yaml': [300, 301, 302, 303]
    .map((vmid, i) =>
      doc(
        'VM',
        `vm-${vmid}`,
        `node: pve${(i % 2) + 1}\nvmid: ${vmid}\nstate: ${i % 2 ? 'stopped' : 'started'}\nmemory: 512MiB\ncpu: {type: x86-64-v2-AES, cores: 1}\ndisks:\n  - {storage: local-lvm, size: 4GiB}\nnetworks:\n  - {bridge: vmbr0}\ntags: [app]`,
      ),
    )
    .join('---\n'),
  'lxc/c/ct.yaml': doc(
    'LXC',
    'ct-320',
    'node: pve2\nvmid: 320\ntemplate: debian-12-standard\nmemory: 512MiB\ncpu: {cores: 1}\nroot: {storage: local-lvm, size: 4GiB}\nnetworks:\n  - {bridge: vmbr0, iface: eth0, ip: dhcp}',
  ),
}

/** cluster c's composition listing `files` (repository paths) */
export const resources = (files: string[]): string =>
  `resources:\n${[...files]
    .sort()
    .map((f) => `  - ../../${f}`)
    .join('\n')}\n`

export interface Repo {
  root: string
  env: NodeJS.ProcessEnv
  cleanup(): void
  gitStatus(): string
}

/** `sim` is the simulator or anything standing in for it (a hostile proxy in front of it). */
export function makeRepo(
  sim: Pick<Simulator, 'url' | 'nodes' | 'fingerprint' | 'token'>,
  files: Record<string, string> = FILES,
): Repo {
  const root = mkdtempSync(join(tmpdir(), 'proxops-reliability-'))
  // the operator's home lies outside the work tree, as on a real machine, and is never the runner's
  const home = mkdtempSync(join(tmpdir(), 'proxops-reliability-home-'))
  const all: Record<string, string> = {
    ...files,
    'clusters/c/config.yaml': `pve:\n  clusters:\n    c:\n      base-url: ${sim.url}\n      nodes: [${sim.nodes.join(', ')}]\n      tls:\n        fingerprint: "${sim.fingerprint}"\n`,
    'clusters/c/resources.yaml': resources(Object.keys(files)),
  }
  for (const [rel, text] of Object.entries(all)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true })
    writeFileSync(join(root, rel), text)
  }
  const git = (...args: string[]): string => execFileSync('git', ['-C', root, ...args], { encoding: 'utf8' })
  git('init', '-q', '-b', 'main')
  git('add', '-A')
  git('-c', 'user.name=t', '-c', 'user.email=t@proxops.invalid', 'commit', '-qm', 'desired')
  return {
    root,
    env: {
      PROXOPS_PVE_TOKEN_VALUE: `${sim.token.id}=${sim.token.secret}`,
      PROXOPS_GIT_PATH: root,
      HOME: home,
      XDG_CONFIG_HOME: join(home, '.config'),
    },
    cleanup: () => {
      rmSync(root, { recursive: true, force: true })
      rmSync(home, { recursive: true, force: true })
    },
    gitStatus: () => git('status', '--porcelain', '--untracked-files=all'),
  }
}

/** write (or, with undefined, delete) repository files and commit them, as an operator's push would */
export function commit(repo: Repo, files: Record<string, string | undefined>, message: string): void {
  for (const [rel, text] of Object.entries(files)) {
    if (text === undefined) rmSync(join(repo.root, rel), { force: true })
    else {
      mkdirSync(dirname(join(repo.root, rel)), { recursive: true })
      writeFileSync(join(repo.root, rel), text)
    }
  }
  execFileSync('git', ['-C', repo.root, 'add', '-A'])
  execFileSync('git', [
    '-C',
    repo.root,
    '-c',
    'user.name=t',
    '-c',
    'user.email=t@proxops.invalid',
    'commit',
    '-qm',
    message,
  ])
}

export interface Run {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

export function startCli(args: string[], repo: Repo): { child: ChildProcess; done: Promise<Run> } {
  const child = spawn(process.execPath, [cliBin, ...args], {
    cwd: repo.root,
    env: { ...runnerEnv(), ...repo.env, NO_COLOR: '1', PROXOPS_CONFIG: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (b: Buffer) => (stdout += b.toString()))
  child.stderr?.on('data', (b: Buffer) => (stderr += b.toString()))
  const done = new Promise<Run>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  )
  return { child, done }
}

/** The runner's environment without what leads to its own files: the repository brings its own HOME. */
function runnerEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([name]) => name !== 'HOME' && !/^(XDG_\w+_HOME|SOPS_AGE_\w+)$/.test(name)),
  )
}

export const runCli = (args: string[], repo: Repo): Promise<Run> => startCli(args, repo).done

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/** a client of the simulator itself (its API token, pinned to its certificate): the admin who edits PVE by hand */
export function simAdmin(sim: Simulator): PveClient {
  return createPveClient({
    baseUrl: sim.url,
    auth: { type: 'token', tokenId: sim.token.id, secret: sim.token.secret },
    tls: { fingerprint: sim.fingerprint! },
  })
}
