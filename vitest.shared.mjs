// Shared vitest settings: workspace packages resolve to their TypeScript sources through the
// "@proxops/source" export condition, so tests never depend on a stale dist/.
import { defineConfig } from 'vitest/config'

export const conditions = ['@proxops/source', 'import', 'module', 'node', 'default']

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // compile-time checks (`*.test-d.ts`, expectTypeOf) are type errors when they fail: `pnpm typecheck` checks them
    // with every other file, once; `npx vitest run --typecheck` in a package reports them as tests
    typecheck: { include: ['src/**/*.test-d.ts', 'test/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest-report.json' },
    passWithNoTests: true,
    // One worker runs many test files without reloading their modules: loading vitest, fast-check and the sources
    // again per file was most of the CPU of the smaller suites (CONTRIBUTING.md, "How long the tests take"). No test
    // file changes state another one reads (no global mocks, stubbed env or shared dispatcher): docs-check's
    // shared-workers.test.ts keeps it so.
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
})
