#!/usr/bin/env node
// `--version` answers before the heavy modules load (cold start target: 250 ms).
if (process.argv.length === 3 && process.argv[2] === '--version') {
  const { version } = await import('./version.js')
  process.stdout.write(`proxops version ${version}\n`)
} else {
  // the command is a bundle (scripts/bundle.mjs): a stack trace, printed for PROXOPS_DEBUG only, names the
  // TypeScript sources. Off otherwise, as reading the maps costs start-up time.
  if (process.env.PROXOPS_DEBUG) process.setSourceMapsEnabled(true)
  // Node 22.1+ keeps the chunks' compiled code between runs (in the system's temporary directory;
  // NODE_DISABLE_COMPILE_CACHE=1 turns it off); Node 20 has no such cache and compiles them on every run
  const nodeModule = (await import('node:module')) as { enableCompileCache?: () => unknown }
  nodeModule.enableCompileCache?.()
  const controller = new AbortController()
  let stops = 0
  const stop = (signal: NodeJS.Signals): void => {
    stops++
    // a second signal means "now": leave without waiting for running tasks
    if (stops > 1) process.exit(signal === 'SIGINT' ? 130 : 143)
    // the command says it at once (cli.ts, stopLine): above apply's live block, in the daemon's log
    controller.abort(new Error(`received ${signal}`))
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
  const { main } = await import('./cli.js')
  process.exitCode = await main(process.argv.slice(2), { signal: controller.signal })
}
