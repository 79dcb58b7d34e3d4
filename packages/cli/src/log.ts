/**
 * Logging: winston, every level to stderr (stdout carries the plan or report). Human lines by default; the
 * daemon writes NDJSON when stderr is not a terminal (a service's journal, a pipe) and timed human lines on one. A redaction format runs last before output, so no credential reaches a line
 * whatever a caller passes as metadata.
 */
import { createRequire } from 'node:module'
import type { Writable } from 'node:stream'
import type winston from 'winston'
import type { LogLevel } from '@proxops/schema'
import type { Redactor } from './redact.js'
import { safeLine } from './safe-text.js'

// winston (and its logform/readable-stream tree) is loaded on the first line actually written: a `diff` at
// the default level usually writes none, and loading it is a noticeable part of a CLI start.
const require = createRequire(import.meta.url)

export type { LogLevel }

export interface LogOptions {
  level: LogLevel
  format: 'text' | 'json'
  redactor: Redactor
  /** defaults to process.stderr */
  stream?: Writable
  /** text lines start with the local time (`14:03:07`): the daemon's log on a terminal */
  clock?: boolean
}

export type LogMeta = Readonly<Record<string, unknown>>

export interface Logger {
  error(message: string, meta?: LogMeta): void
  warn(message: string, meta?: LogMeta): void
  info(message: string, meta?: LogMeta): void
  debug(message: string, meta?: LogMeta): void
  log(level: LogLevel, message: string, meta?: LogMeta): void
}

const RANK: Readonly<Record<LogLevel, number>> = { error: 0, warn: 1, info: 2, debug: 3 }

/**
 * Builds the logger. Structured fields go in metadata: `log.info('cycle done', { cluster, actions })`.
 * Lines below the level cost one comparison; the winston pipeline is built when the first line passes it.
 */
export function createLogger(options: LogOptions): Logger {
  let impl: winston.Logger | undefined
  const limit = RANK[options.level]
  const write = (level: LogLevel, message: string, meta?: LogMeta): void => {
    if (!(RANK[level] <= limit)) return
    impl ??= winstonLogger(options)
    if (meta === undefined) impl[level](message)
    else impl[level](message, meta)
  }
  return {
    error: (message, meta) => write('error', message, meta),
    warn: (message, meta) => write('warn', message, meta),
    info: (message, meta) => write('info', message, meta),
    debug: (message, meta) => write('debug', message, meta),
    log: write,
  }
}

function winstonLogger(options: LogOptions): winston.Logger {
  const winston = require('winston') as typeof import('winston')
  const redact = winston.format((info) => {
    const clean = options.redactor.value({ ...info }) as Record<string, unknown>
    for (const key of Object.keys(info)) delete (info as Record<string, unknown>)[key]
    Object.assign(info, clean)
    return info
  })
  const render =
    options.format === 'json'
      ? winston.format.combine(winston.format.timestamp(), winston.format.json({ deterministic: true }))
      : winston.format.printf((info) => `${options.clock ? `${clockTime(new Date())} ` : ''}${formatText(info)}`)
  // the finished line, text or NDJSON, is one line without a terminal control (safe-text.ts; a JSON line keeps its value)
  const safe = winston.format((info) => {
    const line = (info as Record<symbol, unknown>)[MESSAGE]
    if (typeof line === 'string') (info as Record<symbol, unknown>)[MESSAGE] = safeLine(line)
    return info
  })
  return winston.createLogger({
    level: options.level,
    levels: { error: 0, warn: 1, info: 2, debug: 3 },
    format: winston.format.combine(winston.format.errors({ stack: false }), redact(), render, safe()),
    transports: [new winston.transports.Stream({ stream: options.stream ?? process.stderr })],
    exitOnError: false,
  })
}

/** where winston keeps the finished line (triple-beam's MESSAGE) */
const MESSAGE = Symbol.for('message')

/** `14:03:07`, the local time of day (a terminal's reader knows the date). */
export function clockTime(at: Date): string {
  return [at.getHours(), at.getMinutes(), at.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':')
}

/** `level: message key=value ...` with values JSON-quoted only when they need it. */
export function formatText(info: Record<string | symbol, unknown>): string {
  const { level, message, ...rest } = info as { level: string; message: unknown } & Record<string, unknown>
  const fields = Object.entries(rest)
    .filter(([key]) => typeof key === 'string')
    .map(([key, value]) => `${key}=${quote(value)}`)
  return [`${level}: ${String(message)}`, ...fields].join(' ')
}

function quote(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value)
  return text !== undefined && /^[\w@.:/+-]+$/.test(text) ? text : JSON.stringify(text ?? null)
}
