// `node --import <this file> dist/bin.js ...`: writes every module the process loaded, one URL or path a line, to
// $MODULE_PROBE_FILE as it exits. ES modules are seen by a load hook (it runs on the loader thread and posts each URL
// back), CommonJS ones in require's cache (a createRequire'd `require` skips the ESM hooks). lazy-loading.test.ts reads it.
import { createRequire, register } from 'node:module'
import { writeFileSync } from 'node:fs'
import { MessageChannel } from 'node:worker_threads'

const loaded = []
const { port1, port2 } = new MessageChannel()
port1.on('message', (url) => loaded.push(url))
port1.unref()
const hooks = `let port
export function initialize(data) { port = data.port }
export async function load(url, context, next) { port.postMessage(url); return next(url, context) }`
register(`data:text/javascript,${encodeURIComponent(hooks)}`, {
  parentURL: import.meta.url,
  data: { port: port2 },
  transferList: [port2],
})
process.on('exit', () => {
  const cjs = Object.keys(createRequire(import.meta.url).cache)
  if (process.env.MODULE_PROBE_FILE) writeFileSync(process.env.MODULE_PROBE_FILE, [...loaded, ...cjs].join('\n'))
})
