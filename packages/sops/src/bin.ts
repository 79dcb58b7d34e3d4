#!/usr/bin/env node
import { homedir } from 'node:os'
import { main } from './cli.js'

const stdin = async (): Promise<string> => {
  const chunks: Buffer[] = []
  for await (const c of process.stdin) chunks.push(c as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

process.exitCode = await main(process.argv.slice(2), {
  env: process.env,
  homeDir: homedir(),
  cwd: process.cwd(),
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
  readStdin: stdin,
})
