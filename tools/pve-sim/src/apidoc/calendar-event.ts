/**
 * The `pve-calendar-event` format: pve-common's PVE::CalendarEvent::pve_verify_calendar_event (trim, refuse an
 * empty text) hands the text to proxmox-time's CalendarEvent parser (`parse_calendar_event_incomplete` behind
 * `FromStr`), a systemd.time-like grammar:
 *
 *   [UTC suffix] | minutely|hourly|daily|weekly|monthly|yearly|annually|quarterly|semiannually|semi-annually
 *   [WEEKDAY[..WEEKDAY][,...]] [[YEAR-]MONTH-DAY] [[HOUR:]MINUTE[:SECOND]]
 *
 * where each date/time component is `*`, `*\/R` or a `,` list of `V`, `V..E`, `V/R`, `V..E/R`; values must be
 * below the component's limit (hour 24, minute/second 60, month 13, day 32, year 2200) and a range may not run
 * backwards. The parser is a nom combinator chain; each step here returns the rest of the input and its value,
 * or null, and `opt`/list steps backtrack exactly as nom's `opt` and `separated_list1` do.
 *
 * `computeNextEvent` is proxmox-time's `CalendarEvent::compute_next_event` (what PVE::API2::Backup's index
 * reports as `next-run`), on a UTC clock: the simulated nodes' local time zone is UTC. The grammar's tables (weekday
 * names, component limits, shorthands) are `pve-data/calendar-event.json`, which the schema package reads too.
 */
import { calendarEventData } from '../model/pve-data.js'

/** proxmox-time DateTimeValue: `V`, `V..E`, `V/R` and `V..E/R` (`*\/R` is a repetition from the lowest value) */
type DateTimeValue =
  | { kind: 'single'; value: number }
  | { kind: 'range'; start: number; end: number }
  | { kind: 'repeated'; start: number; step: number; end?: number }

/** a parsed event; an empty component list matches every value */
export interface CalendarEvent {
  utc: boolean
  /** weekdays, Monday = 0 ... Sunday = 6; empty = every day */
  days: Set<number>
  second: DateTimeValue[]
  minute: DateTimeValue[]
  hour: DateTimeValue[]
  day: DateTimeValue[]
  month: DateTimeValue[]
  year: DateTimeValue[]
}

/** the rest of the input and the parsed value, or null (nom's Error) */
type Parsed<T> = [string, T] | null

const { weekdays, components, shorthands } = calendarEventData
const WEEKDAYS = new Map(Object.entries(weekdays))

const single = (value: number): DateTimeValue => ({ kind: 'single', value })
const MIDNIGHT = { hour: [single(0)], minute: [single(0)], second: [single(0)] }

/** the shorthands, as parse_calendar_event_incomplete spells them out */
const SHORTHANDS: Record<string, Partial<CalendarEvent>> = Object.fromEntries(
  Object.entries(shorthands).map(([name, fixed]) => {
    const { days, ...rest } = fixed
    const event: Partial<CalendarEvent> = Object.fromEntries(
      Object.entries(rest).map(([component, values]) => [component, values.map(single)]),
    )
    if (days) event.days = new Set(days)
    return [name, event]
  }),
)

const emptyEvent = (utc: boolean): CalendarEvent => ({
  utc,
  days: new Set(),
  second: [],
  minute: [],
  hour: [],
  day: [],
  month: [],
  year: [],
})

/** digit1 parsed as u32, below `max` (parse_time_comp) */
function timeComp(i: string, max: number): Parsed<number> {
  const m = /^\d+/.exec(i)
  if (!m) return null
  const v = Number(m[0])
  if (v > 0xffffffff || v >= max) return null
  return [i.slice(m[0].length), v]
}

/** parse_date_time_comp: V, V..E, V/R, V..E/R */
function dateTimeComp(i: string, max: number): Parsed<DateTimeValue> {
  const first = timeComp(i, max)
  if (!first) return null
  const [rest, value] = first
  if (rest.startsWith('..')) {
    const end = timeComp(rest.slice(2), max)
    if (end) {
      if (value > end[1]) return null
      if (end[0].startsWith('/')) {
        const rep = timeComp(end[0].slice(1), max)
        return rep && [rep[0], { kind: 'repeated', start: value, step: rep[1], end: end[1] }]
      }
      return [end[0], { kind: 'range', start: value, end: end[1] }]
    }
  }
  if (rest.startsWith('/')) {
    const rep = timeComp(rest.slice(1), max)
    return rep && [rep[0], { kind: 'repeated', start: value, step: rep[1] }]
  }
  return [rest, single(value)]
}

/** nom's separated_list1(tag(","), item): stops before a separator whose item does not parse */
function list1<T>(i: string, item: (s: string) => Parsed<T>): Parsed<T[]> {
  const first = item(i)
  if (first === null) return null
  let rest = first[0]
  const out = [first[1]]
  for (;;) {
    if (!rest.startsWith(',')) return [rest, out]
    const next = item(rest.slice(1))
    if (next === null) return [rest, out]
    rest = next[0]
    out.push(next[1])
  }
}

/** parse_date_time_comp_list: `*` (any), `*\/R` (R > 0: from `start` every R), or a list */
function compList(i: string, start: number, max: number): Parsed<DateTimeValue[]> {
  if (i.startsWith('*')) {
    const rest = i.slice(1)
    if (rest.startsWith('/')) {
      const rep = timeComp(rest.slice(1), max)
      if (rep === null) return null
      if (rep[1] > 0) return [rep[0], [{ kind: 'repeated', start, step: rep[1] }]]
    }
    return [rest, []]
  }
  return list1(i, (s) => dateTimeComp(s, max))
}

/** parse_weekdays_range: a day, or `a..b` (wrapping over Sunday when a comes after b) */
function weekdayRange(i: string): Parsed<number[]> {
  const day = (s: string): Parsed<number> => {
    const m = /^[A-Za-z]+/.exec(s)
    if (!m) return null
    const d = WEEKDAYS.get(m[0].toLowerCase())
    return d === undefined ? null : [s.slice(m[0].length), d]
  }
  const start = day(i)
  if (!start) return null
  if (start[0].startsWith('..')) {
    const end = day(start[0].slice(2))
    if (end) {
      const [a, b] = [start[1], end[1]]
      const days = Array.from({ length: 7 }, (_, d) => d).filter((d) => (a <= b ? d >= a && d <= b : d >= a || d <= b))
      return [end[0], days]
    }
  }
  return [start[0], [start[1]]]
}

function dateSpec(i: string): Parsed<Pick<CalendarEvent, 'year' | 'month' | 'day'>> {
  const y = compList(i, components.year.first, components.year.below)
  if (y !== null && y[0].startsWith('-')) {
    const m = compList(y[0].slice(1), components.month.first, components.month.below)
    if (m !== null && m[0].startsWith('-')) {
      const d = compList(m[0].slice(1), components.day.first, components.day.below)
      if (d !== null) return [d[0], { year: y[1], month: m[1], day: d[1] }]
    }
  }
  const m = compList(i, components.month.first, components.month.below)
  if (m === null || !m[0].startsWith('-')) return null
  const d = compList(m[0].slice(1), components.day.first, components.day.below)
  return d && [d[0], { year: [], month: m[1], day: d[1] }]
}

function timeSpec(i: string): Parsed<Pick<CalendarEvent, 'hour' | 'minute' | 'second'>> {
  let rest = i
  let hour: DateTimeValue[] = []
  const h = compList(rest, components.hour.first, components.hour.below)
  if (h !== null && h[0].startsWith(':')) {
    rest = h[0].slice(1)
    hour = h[1]
  }
  const m = compList(rest, components.minute.first, components.minute.below)
  if (m === null) return null
  rest = m[0]
  let second = [single(0)]
  if (rest.startsWith(':')) {
    const s = compList(rest.slice(1), components.second.first, components.second.below)
    if (s !== null) [rest, second] = s
  }
  return [rest, { hour, minute: m[1], second }]
}

const trimSpaces = (s: string): string => s.replace(/^ +/, '')

/** parse_calendar_event_incomplete plus parse_complete_line: the event, or null when `text` does not parse */
export function parseCalendarEvent(text: string): CalendarEvent | null {
  let i = text
  let utc = false
  if (i.endsWith('UTC')) {
    utc = true
    i = i.slice(0, -3).replace(/ +$/, '')
  }
  const shorthand = SHORTHANDS[i]
  if (shorthand) return { ...emptyEvent(utc), ...shorthand }
  const event = emptyEvent(utc)
  let any = false
  if (/^[A-Za-z]/.test(i)) {
    const days = list1(i, weekdayRange)
    if (days === null) return null
    for (const d of days[1].flat()) event.days.add(d)
    any = true
    i = trimSpaces(days[0])
  }
  const d = dateSpec(i)
  if (d !== null) {
    Object.assign(event, d[1])
    any = true
    i = trimSpaces(d[0])
  }
  const t = timeSpec(i)
  if (t !== null) {
    Object.assign(event, t[1])
    any = true
    i = t[0]
  } else Object.assign(event, MIDNIGHT)
  if (!any || i !== '') return null
  return event
}

/** null when `text` is a valid calendar event, else PVE's error text (without the format's prefix) */
export function calendarEventError(text: string): string | null {
  const event = text.trim()
  if (event === '') return 'unable to parse calendar event - event is empty'
  return parseCalendarEvent(event) === null ? 'unable to parse calendar event' : null
}

/** DateTimeValue::contains */
function contains(v: DateTimeValue, n: number): boolean {
  switch (v.kind) {
    case 'single':
      return v.value === n
    case 'range':
      return n >= v.start && n <= v.end
    case 'repeated':
      if (n < v.start) return false
      if (v.step === 0) return n === v.start
      return (n - v.start) % v.step === 0 && (v.end === undefined || n <= v.end)
  }
}

const listContains = (list: DateTimeValue[], n: number): boolean => list.some((v) => contains(v, n))

/** DateTimeValue::find_next: the smallest value above `n` that the list names, if any */
function findNext(list: DateTimeValue[], n: number): number | undefined {
  let next: number | undefined
  const offer = (v: number) => {
    if (next === undefined || v < next) next = v
  }
  for (const v of list) {
    if (v.kind === 'single') {
      if (v.value > n) offer(v.value)
    } else if (v.kind === 'range') {
      if (n < v.start) offer(v.start)
      else if (n + 1 <= v.end) offer(n + 1)
    } else if (n < v.start) offer(v.start)
    else if (v.step > 0) {
      const c = v.start + Math.floor((n - v.start + v.step) / v.step) * v.step
      if (v.end === undefined || c <= v.end) offer(c)
    }
  }
  return next
}

/**
 * proxmox-time's TmEditor on a UTC clock: the fields of a `struct tm`, normalised after each change as
 * timegm() does; the add_* steps reset every smaller field to its minimum.
 */
class UtcEditor {
  private d: Date

  constructor(epochSeconds: number) {
    this.d = new Date(epochSeconds * 1000)
  }

  private set(year: number, month0: number, day: number, hour: number, min: number, sec: number): void {
    this.d = new Date(Date.UTC(year, month0, day, hour, min, sec))
  }

  year(): number {
    return this.d.getUTCFullYear()
  }
  month(): number {
    return this.d.getUTCMonth() + 1
  }
  day(): number {
    return this.d.getUTCDate()
  }
  hour(): number {
    return this.d.getUTCHours()
  }
  min(): number {
    return this.d.getUTCMinutes()
  }
  sec(): number {
    return this.d.getUTCSeconds()
  }
  /** Monday = 0 ... Sunday = 6 */
  dayNum(): number {
    return (this.d.getUTCDay() + 6) % 7
  }

  addYears(n: number): void {
    if (n !== 0) this.set(this.year() + n, 0, 1, 0, 0, 0)
  }
  addMonths(n: number): void {
    if (n !== 0) this.set(this.year(), this.month() - 1 + n, 1, 0, 0, 0)
  }
  addDays(n: number): void {
    if (n !== 0) this.set(this.year(), this.month() - 1, this.day() + n, 0, 0, 0)
  }
  setTime(hour: number, min: number, sec: number): void {
    this.set(this.year(), this.month() - 1, this.day(), hour, min, sec)
  }
  setMinSec(min: number, sec: number): void {
    this.setTime(this.hour(), min, sec)
  }
  setSec(sec: number): void {
    this.setTime(this.hour(), this.min(), sec)
  }
  epoch(): number {
    return Math.floor(this.d.getTime() / 1000)
  }
}

/**
 * CalendarEvent::compute_next_event: the first second after `last` (epoch seconds) that the event names, found
 * component by component from the year down; undefined when none is found within 1000 steps or no listed year
 * lies ahead.
 */
export function computeNextEvent(event: CalendarEvent, last: number): number | undefined {
  const t = new UtcEditor(last + 1)
  const allDays = event.days.size === 0 || event.days.size === 7
  for (let count = 0; count <= 1000; count++) {
    if (event.year.length > 0 && !listContains(event.year, t.year())) {
      const n = findNext(event.year, t.year())
      if (n === undefined) return undefined
      t.addYears(n - t.year())
      continue
    }
    if (event.month.length > 0 && !listContains(event.month, t.month())) {
      const n = findNext(event.month, t.month())
      if (n !== undefined) t.addMonths(n - t.month())
      else t.addYears(1)
      continue
    }
    if (event.day.length > 0 && !listContains(event.day, t.day())) {
      const n = findNext(event.day, t.day())
      if (n !== undefined) t.addDays(n - t.day())
      else t.addMonths(1)
      continue
    }
    if (!allDays && !event.days.has(t.dayNum())) {
      // the next listed weekday of this week, else Monday of the next
      const today = t.dayNum()
      let n = today + 1
      while (n < 7 && !event.days.has(n)) n++
      t.addDays(n - today)
      continue
    }
    if (event.hour.length > 0 && !listContains(event.hour, t.hour())) {
      const n = findNext(event.hour, t.hour())
      if (n !== undefined) t.setTime(n, 0, 0)
      else t.addDays(1)
      continue
    }
    if (event.minute.length > 0 && !listContains(event.minute, t.min())) {
      const n = findNext(event.minute, t.min())
      if (n !== undefined) t.setMinSec(n, 0)
      else t.setTime(t.hour() + 1, 0, 0)
      continue
    }
    if (event.second.length > 0 && !listContains(event.second, t.sec())) {
      const n = findNext(event.second, t.sec())
      if (n !== undefined) t.setSec(n)
      else t.setMinSec(t.min() + 1, 0)
      continue
    }
    return t.epoch()
  }
  return undefined
}
