/**
 * Sync windows (docs/operations.md, "Sync windows"): per cluster, times that allow or deny disruptive changes,
 * each a calendar event as PVE and systemd write them (`mon..fri 22:00`, `sat *-*-* 02:00`), a duration and a time
 * zone. A window is open at `t` when one of its events started within `duration` before `t`. Disruptive changes
 * (reboot and stop classes, deletes, migrations) wait while no allow window is open (when allow windows exist) or a
 * deny window is; hotplug changes never wait. Pure, minute by minute: the event's seconds are not modelled.
 *
 * The grammar is pve-common's PVE::CalendarEvent (proxmox-time's parser); the schema checks a text against it
 * (calendar-event.ts there), this file evaluates one: a component not given is `*`, except that an event without a
 * time means 00:00 and a time without hours means every hour, as proxmox-time fills them.
 */
import { calendarEventData } from '@proxops/schema'
import type { Action, PlanHold } from '@proxops/planner'

const { weekdays, components, shorthands } = calendarEventData

type Values = ReadonlySet<number> | '*'
export interface CalendarEvent {
  weekdays: Values
  year: Values
  month: Values
  day: Values
  hour: Values
  minute: Values
}

function comp(text: string, first: number, below: number): Values {
  if (text === '*') return '*'
  const out = new Set<number>()
  for (const item of text.split(',')) {
    const m = /^(\*|\d+)(?:\.\.(\d+))?(?:\/(\d+))?$/.exec(item)
    if (!m) throw new Error(`cannot read ${JSON.stringify(item)}`)
    const start = m[1] === '*' ? first : Number(m[1])
    const end = m[2] !== undefined ? Number(m[2]) : m[3] !== undefined || m[1] === '*' ? below - 1 : start
    const step = m[3] !== undefined ? Number(m[3]) : 1
    if (start >= below || end >= below || start > end || step < 1) throw new Error(`${item} is out of range`)
    for (let v = start; v <= end; v += step) out.add(v)
  }
  return out
}

/** Reads a calendar event; throws on text it cannot read (the schema has refused invalid ones before). */
export function parseCalendarEvent(text: string): CalendarEvent {
  let rest = text.trim().replace(/\s*UTC$/, '')
  const event: CalendarEvent = { weekdays: '*', year: '*', month: '*', day: '*', hour: '*', minute: '*' }
  const short = (shorthands as Record<string, Record<string, number[]>>)[rest]
  if (short) {
    const set = (k: keyof CalendarEvent, from: string) => {
      if (short[from]) event[k] = new Set(short[from])
    }
    set('weekdays', 'days')
    set('month', 'month')
    set('day', 'day')
    set('hour', 'hour')
    set('minute', 'minute')
    return event
  }
  const wd = /^([A-Za-z.,]+)\s*/.exec(rest)
  if (wd) {
    const days = new Set<number>()
    for (const item of wd[1]!.split(',')) {
      const [a, b] = item.split('..').map((d) => (weekdays as Record<string, number>)[d.toLowerCase()])
      if (a === undefined) throw new Error(`unknown weekday in ${item}`)
      for (let d = a; d <= (b ?? a); d++) days.add(d)
    }
    event.weekdays = days
    rest = rest.slice(wd[0].length)
  }
  const parts = rest.split(/\s+/).filter(Boolean)
  const date = parts.find((p) => p.includes('-'))
  const time = parts.find((p) => !p.includes('-'))
  if (date) {
    const d = date.split('-')
    const [y, mo, da] = d.length === 3 ? d : ['*', ...d]
    event.year = comp(y!, components.year.first, components.year.below)
    event.month = comp(mo!, components.month.first, components.month.below)
    event.day = comp(da!, components.day.first, components.day.below)
  }
  if (time) {
    const t = time.split(':')
    if (t.length >= 2) event.hour = comp(t[0]!, components.hour.first, components.hour.below)
    event.minute = comp(t.length >= 2 ? t[1]! : t[0]!, components.minute.first, components.minute.below)
  } else {
    event.hour = new Set([0])
    event.minute = new Set([0])
  }
  return event
}

const has = (v: Values, x: number): boolean => v === '*' || v.has(x)

/** one formatter per zone: making one costs far more than using it */
const FORMATS = new Map<string, Intl.DateTimeFormat>()

/** The wall-clock parts of `t` (ms) in `zone`. */
export function zoned(
  t: number,
  zone: string,
): { year: number; month: number; day: number; weekday: number; hour: number; minute: number } {
  let format = FORMATS.get(zone)
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      weekday: 'short',
      hour: 'numeric',
      minute: 'numeric',
    })
    FORMATS.set(zone, format)
  }
  const parts = format.formatToParts(new Date(t))
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? ''
  const weekday = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].indexOf(get('weekday'))
  return {
    year: Number(get('year')),
    month: Number(get('month')),
    day: Number(get('day')),
    weekday,
    hour: Number(get('hour')),
    minute: Number(get('minute')),
  }
}

/** Whether an event starts at the minute that holds `t`. */
export function startsAt(e: CalendarEvent, t: number, zone: string): boolean {
  const z = zoned(t, zone)
  return (
    has(e.weekdays, z.weekday) &&
    has(e.year, z.year) &&
    has(e.month, z.month) &&
    has(e.day, z.day) &&
    has(e.hour, z.hour) &&
    has(e.minute, z.minute)
  )
}

export interface SyncWindow {
  kind: 'allow' | 'deny'
  schedule: string
  durationMs: number
  timeZone: string
}

const MINUTE = 60_000
/** how far ahead the next allowed time is looked for */
export const LOOKAHEAD_MS = 14 * 24 * 60 * MINUTE

/** The start of the window's current opening, or undefined when it is closed at `t`. */
export function openSince(w: SyncWindow, t: number): number | undefined {
  const e = parseCalendarEvent(w.schedule)
  const now = Math.floor(t / MINUTE) * MINUTE
  for (let s = now; s > t - w.durationMs; s -= MINUTE) if (startsAt(e, s, w.timeZone)) return s
  return undefined
}

/** Whether disruptive changes may run at `t`: inside an allow window (when there are any), and in no deny window. */
export function allowedAt(windows: readonly SyncWindow[], t: number): boolean {
  const allows = windows.filter((w) => w.kind === 'allow')
  if (windows.some((w) => w.kind === 'deny' && openSince(w, t) !== undefined)) return false
  return allows.length === 0 || allows.some((w) => openSince(w, t) !== undefined)
}

/** The next minute from `t` at which disruptive changes may run, within LOOKAHEAD_MS; undefined beyond it. */
export function nextAllowed(windows: readonly SyncWindow[], t: number): number | undefined {
  const from = Math.ceil(t / MINUTE) * MINUTE
  // one pass forward: each window's latest event start so far, so each minute costs one check per window
  const state = windows.map((w) => ({ w, e: parseCalendarEvent(w.schedule), last: openSince(w, from - MINUTE) }))
  const hasAllow = windows.some((w) => w.kind === 'allow')
  for (let s = from; s <= t + LOOKAHEAD_MS; s += MINUTE) {
    let allowed = !hasAllow
    let denied = false
    for (const x of state) {
      if (startsAt(x.e, s, x.w.timeZone)) x.last = s
      const open = x.last !== undefined && x.last > s - x.w.durationMs
      if (open && x.w.kind === 'allow') allowed = true
      if (open && x.w.kind === 'deny') denied = true
    }
    if (allowed && !denied) return s
  }
  return undefined
}

/** A change that waits for its window: a restart or stop, a delete, a migration. Hotplug ones never wait. */
export const disruptive = (a: Action): boolean => {
  const verb: string = a.type
  return a.disruption === 'reboot' || a.disruption === 'stop' || verb === 'delete' || verb === 'migrate'
}

/** The planner's hold for a cluster outside its windows at `t` (none when changes may run). */
export function windowHolds(windows: readonly SyncWindow[], t: number): PlanHold[] {
  if (windows.length === 0 || allowedAt(windows, t)) return []
  const next = nextAllowed(windows, t)
  const until = next !== undefined ? `until ${new Date(next).toISOString()}` : 'beyond the next 14 days'
  return [{ code: 'sync-window', message: `outside the cluster's sync windows: waits ${until}`, holds: disruptive }]
}
