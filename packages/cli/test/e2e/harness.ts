/**
 * End-to-end harness: the CLI against tools/pve-sim started in this process, over temporary git repositories.
 * `proxops()` runs the CLI's `main()` in process, with the run's own environment, working directory and streams
 * (a Node process per run cost about a second of CPU, most of this suite's); `start()` and `spawned()` run the
 * built `dist/bin.js` as a process, for what needs one (signals, a terminal, a daemon), and `process.test.ts`
 * holds both to the same output. The suite depends on the build in turbo. Every output is collected so that a
 * final test can assert no secret canary ever appeared.
 */
import { afterAll, beforeAll, vi } from 'vitest'
import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import { createHash } from 'node:crypto'
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { startSimulator, type Simulator, type SimulatorOptions } from '@proxops/pve-sim'
import { createPveClient, type PveClient } from '@proxops/pve-client'
import { encryptSops } from '@proxops/sops'
import { ownHome, runMain } from '../../src/main.test-support.js'

export const BIN = fileURLToPath(new URL('../../dist/bin.js', import.meta.url))
const KEY_FILE = fileURLToPath(new URL('../../../../examples/repository/keys/test-only.agekey', import.meta.url))
export const AGE_KEY_FILE = KEY_FILE

/** Planted secrets: none of them may appear in any output, log line, endpoint or generated file. */
export const CANARY = {
  token: 'e2e-token-CANARY-7f3a9c',
  password: 'e2e-rootpw-CANARY-91b2',
  gitToken: 'e2e-gittoken-CANARY-55d1',
  ciPassword: 'e2e-cipw-CANARY-c0de42',
  sshKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICanaryCanaryCanaryCanaryCanaryCanary0001 canary@e2e',
  envToken: 'e2e-envtoken-CANARY-aa11',
} as const
export const CANARY_VALUES: readonly string[] = [
  CANARY.token,
  CANARY.password,
  CANARY.gitToken,
  CANARY.ciPassword,
  'CanaryCanaryCanaryCanary',
  CANARY.envToken,
]

/** Every stdout/stderr seen by this test file. */
export const transcript: string[] = []

export function findCanaries(text: string): string[] {
  return CANARY_VALUES.filter((c) => text.includes(c))
}

export const TOKEN_ID = 'root@pam!proxops'

export async function startLab(options: SimulatorOptions = {}): Promise<Simulator> {
  return startSimulator({
    nodes: ['pve1', 'pve2'],
    taskDurationMs: 50,
    tokens: [{ id: TOKEN_ID, secret: CANARY.token }],
    rootPassword: CANARY.password,
    authFailureDelayMs: 0,
    log: () => undefined,
    ...options,
  })
}

/** A write-capable client on the lab's token, for tests that drift PVE by hand (close it in afterAll). */
export function adminClient(sim: Simulator): PveClient {
  return createPveClient({
    baseUrl: sim.url,
    auth: { type: 'token', tokenId: TOKEN_ID, secret: CANARY.token },
    tls: { fingerprint: sim.fingerprint! },
  })
}

export const recipient = (): string => {
  const match = /public key: (age1[0-9a-z]+)/.exec(readFileSync(KEY_FILE, 'utf8'))
  if (!match?.[1]) throw new Error('test key without a public key comment')
  return match[1]
}

/** A container template on pve1's `local` storage, for the LXC lifecycles (`ctt/lab/deb.yaml`). */
export const CTT_DEB = `apiVersion: proxops/v1alpha1
kind: CTTemplate
metadata:
  name: deb
spec:
  nodes: [pve1]
  storage: local
  filename: debian-12-standard_12.7-1_amd64.tar.zst
  url: https://downloads.example.invalid/debian-12-standard_12.7-1_amd64.tar.zst
`

export function vmManifest(
  name: string,
  vmid: number,
  over: { memory?: string; node?: string; cloudInit?: boolean } = {},
): string {
  const ci = over.cloudInit
    ? `  hardware:\n    cloud-init:\n      enabled: true\n      storage: local-lvm\n  cloud-init-data:\n    ci-user: ops\n    ssh-key-refs: [cloud-init.ssh-keys.main]\n    ci-password-ref: cloud-init.passwords.default\n`
    : ''
  return `apiVersion: proxops/v1alpha1
kind: VM
metadata:
  name: ${name}
spec:
  node: ${over.node ?? 'pve1'}
  vmid: ${vmid}
  state: stopped
  memory: ${over.memory ?? '512MiB'}
  cpu:
    type: host
    cores: 1
  disks:
    - storage: local-lvm
      size: 4GiB
      interface: scsi0
  networks:
    - bridge: vmbr0
${ci}  tags: [e2e]
`
}

/** VM manifests on `node` by name and vmid, at `vm/lab/<name>.yaml` (for commitManifests) */
export function vmManifests(vmids: Record<string, number>, node: string): Record<string, string> {
  return Object.fromEntries(
    Object.entries(vmids).map(([name, vmid]) => [`vm/lab/${name}.yaml`, vmManifest(name, vmid, { node })]),
  )
}

export interface RepoOptions {
  cluster?: string
  /** manifest files relative to the root; all are listed in resources.yaml */
  manifests?: Record<string, string>
  /** false: no SOPS file, credentials must come from env */
  sops?: boolean
  /** extra lines for the cluster entry (indented 6 spaces) */
  clusterExtra?: string
  proxopsYaml?: string
  baseUrl?: string
  fingerprint?: string | null
  /** more `secrets:` entries of the SOPS file (name -> value): credentials manifests name as `secrets.<name>` */
  extraSecrets?: Record<string, string>
}

export const git = (cwd: string, ...args: string[]): string =>
  execFileSync(
    'git',
    ['-c', 'user.name=e2e', '-c', 'user.email=e2e@example.invalid', '-c', 'init.defaultBranch=main', ...args],
    { cwd, encoding: 'utf8' },
  )

/** A temporary GitOps repository pointed at `sim`, committed. */
export async function makeRepo(sim: Simulator, o: RepoOptions = {}): Promise<string> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'proxops-e2e-'))
  const cluster = o.cluster ?? 'lab'
  const manifests = o.manifests ?? {
    'vm/lab/web.yaml': vmManifest('web', 100, { cloudInit: true }),
    'vm/lab/db.yaml': vmManifest('db', 101),
  }
  for (const [file, text] of Object.entries(manifests)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
    writeFileSync(path.join(root, file), text)
  }
  const dir = path.join(root, 'clusters', cluster)
  mkdirSync(dir, { recursive: true })
  const useSops = o.sops !== false
  const fingerprint = o.fingerprint === undefined ? sim.fingerprint : o.fingerprint
  const lines = [
    'pve:',
    '  clusters:',
    `    ${cluster}:`,
    `      base-url: ${o.baseUrl ?? sim.url}`,
    '      nodes: [pve1, pve2]',
    ...(fingerprint ? ['      tls:', `        fingerprint: "${fingerprint}"`] : []),
    ...(useSops
      ? [
          '      secrets-file: secrets.sops.yaml',
          '      secrets:',
          '        pve:',
          '          user: pve-user',
          '          token-id: pve-token-id',
          '          token: pve-token',
        ]
      : []),
    ...(o.clusterExtra ? [o.clusterExtra] : []),
  ]
  writeFileSync(path.join(dir, 'config.yaml'), `${lines.join('\n')}\n`)
  const listed = Object.keys(manifests)
    .map((f) => `  - ../../${f}\n`)
    .join('')
  writeFileSync(path.join(dir, 'resources.yaml'), listed ? `resources:\n${listed}` : 'resources: []\n')
  if (useSops) {
    const extra = Object.entries(o.extraSecrets ?? {})
      .map(([k, v]) => `  ${k}: ${JSON.stringify(v)}\n`)
      .join('')
    const plain = `secrets:\n  pve-user: root@pam\n  pve-token-id: proxops\n  pve-token: ${CANARY.token}\n  git-token: ${CANARY.gitToken}\n${extra}cloud-init:\n  ssh-keys:\n    main: ${CANARY.sshKey}\n  passwords:\n    default: ${CANARY.ciPassword}\n`
    writeFileSync(
      path.join(dir, 'secrets.sops.yaml'),
      await encryptSops(plain, { recipients: [recipient()], file: 'secrets.sops.yaml' }),
    )
  }
  if (o.proxopsYaml) writeFileSync(path.join(root, 'proxops.yaml'), o.proxopsYaml)
  git(root, 'init', '-q')
  git(root, 'add', '-A')
  git(root, 'commit', '-q', '-m', 'e2e repository')
  return root
}

/** Commits these manifests (path from the root: text) into the repository at `root`, each listed in the cluster's resources.yaml. */
export function commitManifests(
  root: string,
  manifests: Record<string, string>,
  message: string,
  cluster = 'lab',
): void {
  for (const [file, text] of Object.entries(manifests)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
    writeFileSync(path.join(root, file), text)
  }
  const resources = path.join(root, 'clusters', cluster, 'resources.yaml')
  const listed = Object.keys(manifests).map((f) => `  - ../../${f}\n`)
  writeFileSync(resources, `${readFileSync(resources, 'utf8')}${listed.join('')}`)
  git(root, 'add', '-A')
  git(root, 'commit', '-q', '-m', message)
}

/**
 * Makes `files` the repository's whole declared set of one area and commits it: the area's `dirs` are emptied, the
 * files written, and the cluster's resources.yaml lists exactly them (an empty list when there are none).
 */
export function replaceManifests(root: string, dirs: string[], files: Record<string, string>, message: string): void {
  for (const dir of dirs) rmSync(path.join(root, dir), { recursive: true, force: true })
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
    writeFileSync(path.join(root, file), text)
  }
  const listed = Object.keys(files)
  writeFileSync(
    path.join(root, 'clusters/lab/resources.yaml'),
    listed.length > 0 ? `resources:\n${listed.map((f) => `  - ../../${f}\n`).join('')}` : 'resources: []\n',
  )
  git(root, 'add', '-A')
  git(root, 'commit', '-q', '--allow-empty', '-m', message)
}

/** what a lab test file closes after its tests: its admin client, the simulator, the repository */
export async function closeLab(
  admin: { close(): Promise<unknown> },
  sim: { close(): Promise<unknown> },
  repo: string,
): Promise<void> {
  await admin.close()
  await sim.close()
  rmSync(repo, { recursive: true, force: true })
}

export interface RunResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

let homes: string | undefined

/**
 * The operator's HOME for runs in `cwd`: the same directory for every run there, and outside the repository, as
 * on a real machine (the operator's state under ~/.local/share/proxops, e.g. endpoint pins, must never show up as
 * a change of the work tree). Removed when the test process exits.
 */
export function homeFor(cwd: string): string {
  if (homes === undefined) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'proxops-e2e-homes-'))
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
    homes = dir
  }
  const home = path.join(homes, createHash('sha256').update(path.resolve(cwd)).digest('hex').slice(0, 16))
  mkdirSync(home, { recursive: true })
  return home
}

export function baseEnv(root: string, extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    ...ownHome(homeFor(root)),
    SOPS_AGE_KEY_FILE: KEY_FILE,
    NO_COLOR: '1',
    LANG: 'C',
  }
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v
  return env
}

/** Runs the CLI in process in `root` with the lab's environment (baseEnv) and these variables added. */
export function runIn(
  root: string,
  args: readonly string[],
  extra: Record<string, string | undefined> = {},
): Promise<RunResult> {
  return proxops(args, { cwd: root, env: baseEnv(root, extra) })
}

/** Every canary any output of this test file showed (the transcript of every run): none, or a leak. */
export function transcriptCanaries(): string[] {
  return transcript.flatMap((t) => findCanaries(t))
}

/** A simulator for the tests in scope, with the repositories and folders made through it. */
export interface Lab {
  /** the simulator (startLab with the options given), started before the tests in scope */
  readonly sim: Simulator
  /** a repository pointed at the lab (or at `on`), committed (makeRepo) */
  repo(options?: RepoOptions, on?: Simulator): Promise<string>
  /** a new temporary folder */
  tmp(prefix: string): string
  /** `file` (or folder), removed with the lab */
  removeAfter(file: string): string
}

/**
 * The set-up most test files share: a lab started in `beforeAll` of the scope it is called in (the file, or a
 * describe), closed in `afterAll` with every repository and folder made through it removed. Simulator tasks on a
 * shared 2-core machine want generous limits: 180 s a test and 60 s a hook unless `limits` says otherwise.
 */
export function useLab(
  options: SimulatorOptions = {},
  limits: { testTimeout?: number; hookTimeout?: number } = {},
): Lab {
  vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000, ...limits })
  let sim: Simulator | undefined
  const dirs: string[] = []
  beforeAll(async () => {
    sim = await startLab(options)
  })
  afterAll(async () => {
    await sim?.close()
    for (const d of dirs) rmSync(d, { recursive: true, force: true })
  })
  const lab: Lab = {
    get sim(): Simulator {
      if (sim === undefined) throw new Error('the lab starts in beforeAll')
      return sim
    },
    async repo(o: RepoOptions = {}, on?: Simulator): Promise<string> {
      return lab.removeAfter(await makeRepo(on ?? lab.sim, o))
    },
    tmp(prefix: string): string {
      return lab.removeAfter(mkdtempSync(path.join(os.tmpdir(), prefix)))
    },
    removeAfter(file: string): string {
      dirs.push(file)
      return file
    },
  }
  return lab
}

/** Starts the CLI; the caller may signal it before awaiting `done`. */
export function start(
  args: readonly string[],
  o: { cwd: string; env?: NodeJS.ProcessEnv },
): { child: ChildProcess; done: Promise<RunResult>; stderrSoFar: () => string } {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: o.cwd,
    env: o.env ?? baseEnv(o.cwd),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()))
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()))
  const done = new Promise<RunResult>((resolve) => {
    child.on('close', (code, signal) => {
      transcript.push(stdout, stderr)
      resolve({ code, signal, stdout, stderr })
    })
  })
  return { child, done, stderrSoFar: () => stderr }
}

/**
 * Runs the CLI's `main()` to completion in this process, with exactly this environment, working directory and
 * streams: what `bin.ts` runs, without a Node process (and its second of start-up CPU) per run. Cases about the
 * process itself (signals, a terminal, exit codes of `bin.js`) use `start()` or `spawned()`.
 */
export async function proxops(
  args: readonly string[],
  o: { cwd: string; env?: NodeJS.ProcessEnv; tty?: boolean },
): Promise<RunResult> {
  const { code, stdout, stderr } = await runMain(args, {
    cwd: o.cwd,
    env: o.env ?? baseEnv(o.cwd),
    tty: o.tty ?? false,
  })
  transcript.push(stdout, stderr)
  return { code, signal: null, stdout, stderr }
}

/** Runs the built CLI (`dist/bin.js`) to completion as a process. */
export function spawned(args: readonly string[], o: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<RunResult> {
  return start(args, o).done
}

export async function waitFor<T>(
  fn: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 15_000,
  stepMs = 100,
): Promise<T> {
  const until = Date.now() + timeoutMs
  for (;;) {
    const value = await fn()
    if (value !== undefined) return value
    if (Date.now() > until) throw new Error('timed out waiting')
    await new Promise((r) => setTimeout(r, stepMs))
  }
}

/** stderr lines that are not log lines: the error lines a person reads. */
export function errorLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l.startsWith('proxops: '))
}

/** A TCP port on 127.0.0.1 that nothing listens on right now (for a daemon's --listen). */
export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as { port: number }).port
  await new Promise<void>((r) => server.close(() => r()))
  return port
}

/** GET from a daemon on 127.0.0.1; undefined while nothing answers. */
export async function httpGet(
  port: number,
  p: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; headers: Headers } | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${p}`, { headers })
    return { status: res.status, body: await res.text(), headers: res.headers }
  } catch {
    return undefined
  }
}
