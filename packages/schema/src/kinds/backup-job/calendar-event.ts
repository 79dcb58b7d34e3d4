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
 * backwards. The parser is a nom combinator chain; each step here returns the rest of the input or null, and
 * `opt`/list steps backtrack exactly as nom's `opt` and `separated_list1` do. Only validity is modelled, not
 * `compute_next_event`.
 *
 * The grammar's tables (weekday names, component limits, shorthands) are the repository's
 * `pve-data/calendar-event.json` (compiled in as src/pve-data.ts), which the simulator reads too. The simulator
 * parses the grammar with its own reader, which also computes `next-run` (tools/pve-sim/src/apidoc/calendar-event.ts).
 */
import { calendarEventData } from '../../pve-data.js'

type Step = string | null

const { weekdays, components, shorthands } = calendarEventData
const WEEKDAYS = new Map(Object.entries(weekdays))
const SHORTHANDS = new Set(Object.keys(shorthands))

/** digit1 parsed as u32, below `max` (parse_time_comp); returns [rest, value] */
function timeComp(i: string, max: number): [string, number] | null {
  const m = /^\d+/.exec(i)
  if (!m) return null
  const v = Number(m[0])
  if (v > 0xffffffff || v >= max) return null
  return [i.slice(m[0].length), v]
}

/** parse_date_time_comp: V, V..E, V/R, V..E/R */
function dateTimeComp(i: string, max: number): Step {
  const first = timeComp(i, max)
  if (!first) return null
  let [rest] = first
  if (rest.startsWith('..')) {
    const end = timeComp(rest.slice(2), max)
    if (end) {
      if (first[1] > end[1]) return null
      rest = end[0]
      if (rest.startsWith('/')) return timeComp(rest.slice(1), max)?.[0] ?? null
      return rest
    }
  }
  if (rest.startsWith('/')) return timeComp(rest.slice(1), max)?.[0] ?? null
  return rest
}

/** nom's separated_list1(tag(","), item): stops before a separator whose item does not parse */
function list1(i: string, item: (s: string) => Step): Step {
  let rest = item(i)
  if (rest === null) return null
  for (;;) {
    if (!rest.startsWith(',')) return rest
    const next = item(rest.slice(1))
    if (next === null) return rest
    rest = next
  }
}

/** parse_date_time_comp_list: `*`, `*\/R` (R > 0), or a list */
function compList(i: string, max: number): Step {
  if (i.startsWith('*')) {
    const rest = i.slice(1)
    if (rest.startsWith('/')) {
      const rep = timeComp(rest.slice(1), max)
      if (rep === null) return null
      if (rep[1] > 0) return rep[0]
    }
    return rest
  }
  return list1(i, (s) => dateTimeComp(s, max))
}

function weekdayRange(i: string): Step {
  const day = (s: string): [string, number] | null => {
    const m = /^[A-Za-z]+/.exec(s)
    if (!m) return null
    const d = WEEKDAYS.get(m[0].toLowerCase())
    return d === undefined ? null : [s.slice(m[0].length), d]
  }
  const start = day(i)
  if (!start) return null
  if (start[0].startsWith('..')) {
    const end = day(start[0].slice(2))
    if (end) return end[0]
  }
  return start[0]
}

function dateSpec(i: string): Step {
  const ymd = ((): Step => {
    const y = compList(i, components.year.below)
    if (y === null || !y.startsWith('-')) return null
    const m = compList(y.slice(1), components.month.below)
    if (m === null || !m.startsWith('-')) return null
    return compList(m.slice(1), components.day.below)
  })()
  if (ymd !== null) return ymd
  const m = compList(i, components.month.below)
  if (m === null || !m.startsWith('-')) return null
  return compList(m.slice(1), components.day.below)
}

function timeSpec(i: string): Step {
  let rest = i
  const h = compList(rest, components.hour.below)
  if (h !== null && h.startsWith(':')) rest = h.slice(1)
  const m = compList(rest, components.minute.below)
  if (m === null) return null
  rest = m
  if (rest.startsWith(':')) {
    const s = compList(rest.slice(1), components.second.below)
    if (s !== null) rest = s
  }
  return rest
}

const trimSpaces = (s: string): string => s.replace(/^ +/, '')

/** null when `text` is a valid calendar event, else PVE's error text (without the format's prefix) */
export function calendarEventError(text: string): string | null {
  const event = text.trim()
  if (event === '') return 'unable to parse calendar event - event is empty'
  let i = event
  if (i.endsWith('UTC')) i = i.slice(0, -3).replace(/ +$/, '')
  const fail = 'unable to parse calendar event'
  let any = false
  if (/^[A-Za-z]/.test(i)) {
    if (SHORTHANDS.has(i)) return null
    const n = list1(i, weekdayRange)
    if (n === null) return fail
    any = true
    i = trimSpaces(n)
  }
  const d = dateSpec(i)
  if (d !== null) {
    any = true
    i = trimSpaces(d)
  }
  const t = timeSpec(i)
  if (t !== null) {
    any = true
    i = t
  }
  if (!any || i !== '') return fail
  return null
}
