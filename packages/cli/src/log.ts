/**
 * Logging: winston, every level to stderr (stdout carries the plan or report). Human lines by default,
 * NDJSON in daemon mode. A redaction format runs last before output, so no credential reaches a line
 * whatever a caller passes as metadata.
 */
import winston from 'winston'
import type { Writable } from 'node:stream'
import type { Redactor } from './redact.js'

export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

export interface LogOptions {
  level: LogLevel
  format: 'text' | 'json'
  redactor: Redactor
  /** defaults to process.stderr */
  stream?: Writable
}

export type Logger = winston.Logger

/** Builds the logger. Structured fields go in metadata: `log.info('cycle done', { cluster, actions })`. */
export function createLogger(options: LogOptions): Logger {
  const redact = winston.format((info) => {
    const clean = options.redactor.value({ ...info }) as Record<string, unknown>
    for (const key of Object.keys(info)) delete (info as Record<string, unknown>)[key]
    Object.assign(info, clean)
    return info
  })
  const render =
    options.format === 'json'
      ? winston.format.combine(winston.format.timestamp(), winston.format.json({ deterministic: true }))
      : winston.format.printf((info) => formatText(info))
  return winston.createLogger({
    level: options.level,
    levels: { error: 0, warn: 1, info: 2, debug: 3 },
    format: winston.format.combine(winston.format.errors({ stack: false }), redact(), render),
    transports: [new winston.transports.Stream({ stream: options.stream ?? process.stderr })],
    exitOnError: false,
  })
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
