/**
 * The node:http(s) front: reads the request, serves the loopback-only control endpoint under `/_sim/`, hands
 * everything else to the ApiHandler and writes its response (status line with PVE's reason phrase).
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net'
import type { ApiHandler, SimRequest } from './api.js'

export interface FrontOptions {
  api: ApiHandler
  tls?: { key: string; cert: string }
  /** `/_sim/...` requests (loopback only); undefined = no control endpoint */
  control?: (method: string, path: string, body: Buffer) => { status: number; body: unknown }
  log?: (line: string) => void
}

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1'])
// read at most this much of a body; PVE rejects > 512 KiB from the Content-Length header anyway
const READ_LIMIT = 512 * 1024 + 1

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (c: Buffer) => {
      size += c.length
      if (size <= READ_LIMIT) chunks.push(c)
    })
    req.on('end', () => resolve(Buffer.concat(chunks)))
    req.on('error', reject)
  })
}

function wait(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref())
}

function headersOf(req: IncomingMessage): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {}
  for (const [k, v] of Object.entries(req.headers)) out[k] = Array.isArray(v) ? v.join(', ') : v
  return out
}

export interface Listening {
  port: number
  close(): Promise<void>
}

export async function listen(opts: FrontOptions, port: number, host: string): Promise<Listening> {
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    void (async () => {
      try {
        const body = await readBody(req)
        const url = req.url ?? '/'
        if (url.startsWith('/_sim/')) {
          const allowed = opts.control && LOOPBACK.has(req.socket.remoteAddress ?? '')
          const r =
            allowed && opts.control
              ? opts.control(req.method ?? 'GET', url.split('?')[0] as string, body)
              : { status: 403, body: { error: 'control endpoint is only available on loopback' } }
          res.writeHead(r.status, { 'Content-Type': 'application/json;charset=UTF-8' })
          res.end(JSON.stringify(r.body))
          return
        }
        const sim: SimRequest = { method: req.method ?? 'GET', url, headers: headersOf(req), body }
        const r = await opts.api.handle(sim)
        if (r.network === 'reset') {
          req.socket.destroy()
          return
        }
        if (r.network === 'hang') return // answered never; close() drops the connection
        if (r.delayMs > 0) await wait(r.delayMs)
        if (res.destroyed) return
        res.writeHead(r.status, r.reason, r.headers)
        res.end(r.body)
      } catch (err) {
        opts.log?.(`pve-sim: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`)
        if (!res.headersSent) res.writeHead(500, 'internal simulator error')
        res.end()
      }
    })()
  }
  if (!opts.tls) {
    const server = createHttpServer(onRequest)
    await listenOn(server, port, host)
    return { port: (server.address() as AddressInfo).port, close: () => closeHttp(server) }
  }
  // one port for both, like pveproxy: TLS handshakes go to the API, plain HTTP gets a redirect to https
  const tlsServer = createHttpsServer({ key: opts.tls.key, cert: opts.tls.cert }, onRequest)
  const plain = createHttpServer(redirectToHttps)
  const sockets = new Set<Socket>()
  const front = createNetServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.once('data', (first: Buffer) => {
      socket.pause()
      socket.unshift(first)
      ;(first[0] === 0x16 ? tlsServer : plain).emit('connection', socket)
      process.nextTick(() => socket.resume())
    })
    socket.on('error', () => socket.destroy())
  })
  await listenOn(front, port, host)
  return {
    port: (front.address() as AddressInfo).port,
    close: async () => {
      const closed = new Promise<void>((resolve) => front.close(() => resolve()))
      for (const s of sockets) s.destroy()
      await closed
    },
  }
}

/** AnyEvent.pm ensure_tls_connection: 301 for GET/HEAD, 308 otherwise, to https://<Host><uri>; then disconnect */
function redirectToHttps(req: IncomingMessage, res: ServerResponse): void {
  const host = req.headers.host
  if (!host) {
    res.writeHead(500, "Header field 'Host' not found in request", { Connection: 'close' })
    res.end()
    return
  }
  const get = req.method === 'GET' || req.method === 'HEAD'
  res.writeHead(get ? 301 : 308, get ? 'Moved Permanently' : 'Permanent Redirect', {
    Location: `https://${host.replace(/^https?:\/\//, '')}${req.url ?? '/'}`,
    Connection: 'close',
    'Content-Length': '0',
  })
  res.end()
}

async function listenOn(server: NetServer, port: number, host: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
}

async function closeHttp(server: Server): Promise<void> {
  await new Promise<void>((resolve) => {
    server.close(() => resolve())
    server.closeAllConnections()
  })
}
