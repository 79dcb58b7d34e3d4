import { fc, test } from '@fast-check/vitest'
import { describe, expect, it } from 'vitest'
import { calendarEventError, computeNextEvent, parseCalendarEvent, type CalendarEvent } from './calendar-event.js'

// proxmox-time calendar_event.rs (parse_calendar_event_incomplete) behind pve-common pve_verify_calendar_event
describe('calendarEventError (proxmox-time CalendarEvent::from_str)', () => {
  it.each([
    'daily',
    'hourly',
    'semi-annually',
    'daily UTC',
    'mon..fri 02:30',
    'sat,sun 21:00',
    'mon,wed..fri',
    'Monday 12:00',
    '*-*-01 00:00',
    '2025-12-24 18:00:00',
    '12-25',
    '*/15',
    '0/2:00',
    '8..17/3:00',
    '21:00',
    '5',
    '30:00', // hour 30 is no hour, so proxmox-time reads minute 30, second 00
    'mon..fri 24:00', // likewise: minute 24 of every hour
    '  mon 9:00  ',
    '*:0/5',
  ])('accepts %j', (text) => {
    expect(calendarEventError(text)).toBeNull()
  })

  it.each([
    '',
    '   ',
    'sometimes',
    'mon..fri 1:2:3:4',
    '10:60',
    '2200-01-01',
    'mon 10:00 extra',
    '13-01',
    '5..3',
    'mon,',
    '*/0',
  ])('refuses %j', (text) => {
    expect(calendarEventError(text)).toMatch(/^unable to parse calendar event/)
  })
})

const at = (iso: string): number => Date.parse(`${iso}Z`) / 1000
const iso = (epoch: number | undefined): string | undefined =>
  epoch === undefined ? undefined : new Date(epoch * 1000).toISOString().replace('.000Z', '')
const next = (text: string, from: string): string | undefined => {
  const event = parseCalendarEvent(text)
  if (!event) throw new Error(`does not parse: ${text}`)
  return iso(computeNextEvent(event, at(from)))
}

// proxmox-time calendar_event.rs compute_next_event (TmEditor on a UTC clock), as PVE::API2::Backup index calls it
describe('computeNextEvent (proxmox-time CalendarEvent::compute_next_event)', () => {
  it.each([
    ['daily', '2025-01-01T00:00:00', '2025-01-02T00:00:00'], // strictly after `last`
    ['daily', '2025-01-01T23:59:59', '2025-01-02T00:00:00'],
    ['hourly', '2025-03-10T10:00:00', '2025-03-10T11:00:00'],
    ['minutely', '2025-03-10T10:00:30', '2025-03-10T10:01:00'],
    ['*/15', '2025-03-10T10:07:30', '2025-03-10T10:15:00'],
    ['*/15', '2025-03-10T10:45:00', '2025-03-10T11:00:00'],
    ['weekly', '2025-01-01T08:00:00', '2025-01-06T00:00:00'], // Wednesday -> Monday
    ['mon..fri 02:30', '2025-01-04T12:00:00', '2025-01-06T02:30:00'], // Saturday -> Monday
    ['mon..fri 02:30', '2025-01-06T02:29:59', '2025-01-06T02:30:00'],
    ['fri..mon 01:00', '2025-01-07T12:00:00', '2025-01-10T01:00:00'], // a range over Sunday: Tuesday -> Friday
    ['sat,sun 21:00', '2025-01-05T21:00:00', '2025-01-11T21:00:00'],
    ['monthly', '2025-01-31T10:00:00', '2025-02-01T00:00:00'],
    ['*-*-31', '2025-02-01T00:00:00', '2025-03-31T00:00:00'], // February has no 31st
    ['quarterly', '2025-05-10T00:00:00', '2025-07-01T00:00:00'],
    ['yearly', '2025-06-01T00:00:00', '2026-01-01T00:00:00'],
    ['12-25 18:00', '2025-12-25T18:00:00', '2026-12-25T18:00:00'],
    ['*-02-29', '2025-03-01T00:00:00', '2028-02-29T00:00:00'],
    ['8..17/3:00', '2025-01-01T17:30:00', '2025-01-02T08:00:00'],
    ['mon 9:00 UTC', '2025-01-06T08:00:00', '2025-01-06T09:00:00'],
    ['2030-01-01', '2025-01-01T00:00:00', '2030-01-01T00:00:00'],
    ['2024-01-01', '2025-01-01T00:00:00', undefined], // no listed year lies ahead
  ])('%s after %s is %s', (text, from, expected) => {
    expect(next(text, from)).toBe(expected)
  })
})

/** an event the grammar accepts, assembled from the parts parse_calendar_event_incomplete reads in order */
const eventText = fc.oneof(
  fc.constantFrom('minutely', 'hourly', 'daily', 'weekly', 'monthly', 'yearly', 'quarterly', 'semiannually'),
  fc
    .record({
      days: fc.option(fc.constantFrom('mon', 'sat,sun', 'mon..fri', 'fri..tue', 'wed,fri..sat'), { nil: undefined }),
      date: fc.option(fc.constantFrom('*-*-01', '*-*-1..7', '*-1,4,7,10-15', '02-29', '*-*/2-*', '*-*-28..31'), {
        nil: undefined,
      }),
      time: fc.option(fc.constantFrom('02:30', '*:0/20', '8..17/3:00', '*/15', '23:59:59', '0,12:00', '*:*:30'), {
        nil: undefined,
      }),
    })
    .map(({ days, date, time }) => [days, date, time].filter((p) => p !== undefined).join(' '))
    .filter((text) => text !== ''),
)

/** whether an instant matches every component of the event (an independent reading of DateTimeValue::contains) */
function matches(e: CalendarEvent, epoch: number, upTo: 'minute' | 'second'): boolean {
  const d = new Date(epoch * 1000)
  const has = (list: CalendarEvent['hour'], n: number): boolean =>
    list.length === 0 ||
    list.some((v) =>
      v.kind === 'single'
        ? v.value === n
        : v.kind === 'range'
          ? n >= v.start && n <= v.end
          : n >= v.start &&
            (v.end === undefined || n <= v.end) &&
            (v.step === 0 ? n === v.start : (n - v.start) % v.step === 0),
    )
  const weekday = (d.getUTCDay() + 6) % 7
  return (
    has(e.year, d.getUTCFullYear()) &&
    has(e.month, d.getUTCMonth() + 1) &&
    has(e.day, d.getUTCDate()) &&
    (e.days.size === 0 || e.days.has(weekday)) &&
    has(e.hour, d.getUTCHours()) &&
    has(e.minute, d.getUTCMinutes()) &&
    (upTo === 'minute' || has(e.second, d.getUTCSeconds()))
  )
}

describe('computeNextEvent properties', () => {
  const last = fc.integer({ min: at('2024-01-01T00:00:00'), max: at('2030-12-31T00:00:00') })
  test.prop([eventText, last], { numRuns: 150 })(
    'the next event matches, lies after `last`, and nothing in between matches',
    (text, from) => {
      const event = parseCalendarEvent(text)
      expect(event, text).not.toBeNull()
      if (!event) return
      const n = computeNextEvent(event, from)
      expect(n, text).toBeDefined()
      if (n === undefined) return
      expect(n).toBeGreaterThan(from)
      expect(matches(event, n, 'second'), `${text} at ${iso(n)}`).toBe(true)
      // minute by minute (second by second inside a matching minute) over at most three days
      const end = Math.min(n, from + 3 * 86_400)
      for (let t = from + 1; t < end;) {
        if (!matches(event, t, 'minute')) {
          t = (Math.floor(t / 60) + 1) * 60
          continue
        }
        expect(matches(event, t, 'second'), `${text}: ${iso(t)} matches before ${iso(n)}`).toBe(false)
        t++
      }
    },
  )
})
