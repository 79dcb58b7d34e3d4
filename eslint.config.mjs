// Lint gate (`pnpm lint`, run by .ci/run): typescript-eslint's type-checked rules, plus the import boundaries of
// the package table in docs/architecture.md ("Packages and the direction of dependencies").
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import importX from 'eslint-plugin-import-x'
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript'

const root = dirname(fileURLToPath(import.meta.url))

// What the production sources of each package may import, as docs/architecture.md's table says. `workspace` lists
// the @proxops packages (with optional subpath) a package may use; `external`, where given, is the complete list of
// third-party packages a library may use (node: built-ins are always allowed). Tests may also use their package's
// devDependencies, but never cross into another package by a relative path, and the simulator's tests import
// nothing from packages/ either. `layers` bounds what a folder inside a package may import by a relative path.
// The planner's layers (docs/architecture.md, "Object kinds"): the contract (the plan, the live inventory, the
// ports, the desired state) at the bottom, the kit above it, each kind (a folder under src/kinds) above the kit, and
// the pipeline on top, which reaches a kind only through the registry, src/kinds/index.ts. `*` in `dir` binds one
// folder name, which `may` can name again: a kind reaches its own folder.
const PLANNER_CONTRACT = ['src/plan-types.ts', 'src/inventory.ts', 'src/ports.ts', 'src/desired.ts', 'src/errors.ts']
// Where one kind still reaches into another (debt: each becomes kit code or a part of the Kind value).
const KIND_TO_KIND = {
  firewall: ['src/kinds/guest/disruption.ts', 'src/kinds/guest/guest-plan.ts'],
  guest: ['src/kinds/ha/await-power.ts', 'src/kinds/ha/plan.ts', 'src/kinds/pool/confirm.ts', 'src/kinds/pool/plan.ts'],
}
const PLANNER_LAYERS = [
  { dir: PLANNER_CONTRACT, may: PLANNER_CONTRACT },
  { dir: 'src/kit', may: ['src/kit', ...PLANNER_CONTRACT] },
  ...Object.entries(KIND_TO_KIND).map(([kind, also]) => ({
    dir: `src/kinds/${kind}`,
    may: [`src/kinds/${kind}`, 'src/kit', ...PLANNER_CONTRACT, ...also],
  })),
  { dir: 'src/kinds/*', may: ['src/kinds/*', 'src/kit', ...PLANNER_CONTRACT] },
  { dir: 'src/kinds/index.ts', mayNot: [] },
  { dir: 'src', mayNot: ['src/kinds/*/'], message: 'the pipeline reaches a kind only through src/kinds/index.ts' },
]

const ALL = ['@proxops/schema', '@proxops/pve-client', '@proxops/sops', '@proxops/planner']
const BOUNDARIES = {
  'packages/schema': {
    workspace: ['@proxops/pve-client/wire'],
    external: ['valibot', '@valibot/to-json-schema', 'yaml'],
  },
  'packages/pve-client': { workspace: [], external: ['undici'] },
  'packages/sops': { workspace: [], external: ['yaml', 'age-encryption'] },
  'packages/planner': {
    workspace: ['@proxops/schema', '@proxops/pve-client/wire'],
    external: [],
    layers: PLANNER_LAYERS,
  },
  'packages/cli': { workspace: ALL },
  'tools/pve-sim': {
    workspace: [],
    testWorkspace: [],
    // The PVE model is the bottom layer: its sources and tests reach only the model, pve-common's schema code in
    // src/apidoc, and (tests) the test harness, never the HTTP, route, access or control layers above it.
    layers: [{ dir: 'src/model', may: ['src/model', 'src/apidoc'], testsMay: ['src/test-support'] }],
  },
  'tools/bench': { workspace: [...ALL, '@proxops/pve-sim', '@proxops/cli'] },
  'tools/reliability': { workspace: [...ALL, '@proxops/pve-sim', '@proxops/cli'] },
  'tools/docs-check': { workspace: [...ALL, '@proxops/pve-sim', '@proxops/cli'] },
  'examples/custom-reconciler': { workspace: ['@proxops/schema', '@proxops/pve-client', '@proxops/planner'] },
}

/** `entry` names a file or a folder (`*` is any one name; a trailing `/` means strictly inside the folder). */
function matches(entry, rel) {
  const pattern = entry.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]+')
  return entry.endsWith('/') ? new RegExp(`^${pattern}`).test(rel) : new RegExp(`^${pattern}(/|$)`).test(rel)
}

/** The first layer whose `dir` (a folder, a pattern with one `*`, or a list of files) holds the file `rel`. */
function layerOf(layers, rel) {
  for (const layer of layers) {
    for (const dir of [layer.dir].flat()) {
      const re = new RegExp(
        `^${dir.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace('*', '([^/]+)')}${dir.endsWith('.ts') ? '$' : '/'}`,
      )
      const m = re.exec(rel)
      if (m) return { ...layer, bound: m[1] }
    }
  }
  return undefined
}

const TEST_FILE = /(\.test\.ts|\.test-d\.ts|\.test\.helpers\.ts)$|[/\\](test|test-support)[/\\]/

/** `@scope/name/sub` -> `@scope/name`, `name/sub` -> `name`. */
const packageOf = (spec) =>
  spec
    .split('/')
    .slice(0, spec.startsWith('@') ? 2 : 1)
    .join('/')

/** `allowed` entries are a package (any subpath) or a package plus one subpath (exactly that subpath). */
const allows = (allowed, spec) =>
  allowed.some((a) => (a.split('/').length > (a.startsWith('@') ? 2 : 1) ? spec === a : packageOf(spec) === a))

const boundaries = {
  meta: { type: 'problem', schema: [] },
  create(context) {
    const file = context.filename
    const pkgDir = Object.keys(BOUNDARIES).find((d) => file.startsWith(join(root, d) + sep))
    if (!pkgDir) return {}
    const rule = BOUNDARIES[pkgDir]
    const isTest = TEST_FILE.test(sep + relative(join(root, pkgDir), file))
    const check = (node, spec) => {
      if (typeof spec !== 'string') return
      const where = `${pkgDir}${isTest ? ' (tests)' : ''}`
      if (spec.startsWith('.')) {
        // Relative paths stay inside the package; the repository root's shared configs are fine.
        const target = resolve(dirname(file), spec)
        const other = Object.keys(BOUNDARIES).find((d) => d !== pkgDir && target.startsWith(join(root, d) + sep))
        if (other) context.report({ node, message: `${where} reaches into ${other} by a relative path: ${spec}` })
        const rel = relative(join(root, pkgDir), target).split(sep).join('/').replace(/\.js$/, '.ts')
        const own = relative(join(root, pkgDir), file).split(sep).join('/')
        const layer = layerOf(rule.layers ?? [], own)
        if (layer && !isTest) {
          // `*` in an entry is the folder name the file's own `dir` bound (a kind reaches its own folder)
          const bind = (entry) => (layer.bound === undefined ? entry : entry.replace('*', layer.bound))
          const may = layer.may?.map(bind)
          const mayNot = layer.mayNot ?? []
          const hit = (entry) => matches(entry, rel)
          if ((may && !may.some(hit)) || mayNot.some(hit)) {
            const what = may
              ? `may import only ${may.join(', ')}`
              : (layer.message ?? `may not import ${mayNot.join(', ')}`)
            context.report({ node, message: `${pkgDir}/${own}: ${what}, not ${spec}` })
          }
        }
        for (const l of rule.layers ?? []) {
          if (!l.testsMay || !isTest || !file.startsWith(join(root, pkgDir, l.dir) + sep)) continue
          const may = [...l.may, ...l.testsMay]
          if (!may.some((d) => matches(d, rel)))
            context.report({
              node,
              message: `${pkgDir}/${l.dir} (tests) may import only ${may.join(', ')}, not ${spec}`,
            })
        }
        return
      }
      if (spec.startsWith('node:')) return
      if (spec.startsWith('@proxops/')) {
        if (/^@proxops\/[^/]+\/(src|dist)(\/|$)/.test(spec)) {
          context.report({ node, message: `${spec}: import a package's public entry points, not its files` })
          return
        }
        const allowed = isTest ? (rule.testWorkspace ?? null) : rule.workspace
        if (allowed && !allows(allowed, spec) && packageOf(spec) !== `@proxops/${pkgDir.split('/')[1]}`) {
          const list = allowed.length ? allowed.join(', ') : 'nothing from packages/'
          context.report({ node, message: `${where} may import ${list} (docs/architecture.md), not ${spec}` })
        }
        return
      }
      if (!isTest && rule.external && !allows(rule.external, spec)) {
        const list = rule.external.length ? rule.external.join(', ') : 'no third-party package'
        context.report({ node, message: `${where} may import ${list} (docs/architecture.md), not ${spec}` })
      }
    }
    const fromSource = (node) => check(node.source, node.source?.value)
    return {
      ImportDeclaration: fromSource,
      ExportNamedDeclaration: (node) => node.source && fromSource(node),
      ExportAllDeclaration: fromSource,
      ImportExpression: (node) => node.source.type === 'Literal' && check(node.source, node.source.value),
      TSImportType: (node) => check(node, node.argument?.literal?.value ?? node.source?.value),
    }
  },
}

export default tseslint.config(
  { ignores: ['**/node_modules/', '**/dist/', '**/.turbo/', 'tools/bench/results/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      // One program for every file, the one `pnpm typecheck` checks: with a project per package each package's
      // sources were loaded again into every package that imports them (CONTRIBUTING.md, "How long the tests take").
      parserOptions: { project: ['./tsconfig.typecheck.json'], tsconfigRootDir: root },
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly' },
    },
    plugins: { proxops: { rules: { boundaries } } },
    rules: {
      'proxops/boundaries': 'error',
      // Public APIs are explicit lists: `export *` would publish whatever a module adds later.
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportAllDeclaration', message: 'export the names one by one (no `export *`)' },
      ],
      // Ports (LiveReader, PveWriter, route handlers) return promises; an async body that happens not to await
      // still turns a throw into a rejection, which is what callers rely on.
      '@typescript-eslint/require-await': 'off',
      // Open unions such as `'qemu' | 'lxc' | string` list the known values of a PVE field that may hold others.
      '@typescript-eslint/no-redundant-type-constituents': 'off',
      // The flagged values are PVE form parameters and error codes, `unknown` or `string | number | object` at
      // the wire boundary, where String() is the intended rendering; template literals stay checked by
      // restrict-template-expressions.
      '@typescript-eslint/no-base-to-string': 'off',
      // The objects whose members are passed around (Paint, the lazily loaded yaml module, the simulator's
      // handles) are records of plain functions declared with method syntax; none uses `this`.
      '@typescript-eslint/unbound-method': 'off',
      // A leading underscore names a value that is dropped on purpose (`const { digest: _d, ...rest } = config`).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      // An AbortSignal's reason is rejected as it is, the way fetch does.
      '@typescript-eslint/prefer-promise-reject-errors': [
        'error',
        { allowThrowingAny: true, allowThrowingUnknown: true },
      ],
    },
  },
  {
    // No runtime import circle in any package (type-only imports do not count: they vanish at runtime): a circle
    // makes a module's exports undefined while the circle loads, depending on which file a caller imports first.
    files: ['packages/*/src/**/*.ts', 'tools/*/src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      // the dependencies are parsed as TypeScript (import-x's own typescript settings), resolved as tsc does
      'import-x/extensions': importX.flatConfigs.typescript.settings['import-x/extensions'],
      'import-x/parsers': importX.flatConfigs.typescript.settings['import-x/parsers'],
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: join(root, 'tsconfig.typecheck.json') })],
    },
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  {
    // The simulator rewraps an error into the message PVE answers with (`unable to create VM 100 - ...`), the way
    // PVE's `die "...: $err"` does; the HTTP answer carries the message only, so a `cause` would be dropped.
    files: ['tools/pve-sim/**'],
    rules: { 'preserve-caught-error': 'off' },
  },
  {
    // Tests read JSON answers and plans as loose data, and stringify secrets on purpose to prove redaction.
    files: ['**/*.test.ts', '**/*.test-d.ts', '**/*.test.helpers.ts', '**/test/**', '**/test-support/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/restrict-template-expressions': 'off',
      '@typescript-eslint/restrict-plus-operands': 'off',
      'no-control-regex': 'off',
    },
  },
  {
    // Files outside every tsconfig (configs, plain .mjs scripts and examples) are linted without type information.
    files: ['**/*.mjs', '**/*.js', '**/*.d.mts', '**/vitest.config.ts'],
    ...tseslint.configs.disableTypeChecked,
  },
)
