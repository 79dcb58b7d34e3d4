import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { makeAction } from '@proxops/planner/testing'
import {
  allowedAt,
  disruptive,
  nextAllowed,
  openSince,
  parseCalendarEvent,
  windowHolds,
  type SyncWindow,
} from './sync-window.js'

const at = (iso: string): number => Date.parse(iso)
// weekday evenings in Berlin (UTC+1 in December): 22:00 to 02:00 local, 21:00Z to 01:00Z
const evenings: SyncWindow = {
  kind: 'allow',
  schedule: 'mon..fri 22:00',
  durationMs: 4 * 3600_000,
  timeZone: 'Europe/Berlin',
}

describe('sync windows on a fake clock', () => {
  it('an allow window opens at its event and stays open for its duration, across midnight, in its time zone', () => {
    // 2026-12-08 is a Tuesday
    expect(allowedAt([evenings], at('2026-12-08T20:59:00Z'))).toBe(false)
    expect(openSince(evenings, at('2026-12-08T21:00:00Z'))).toBe(at('2026-12-08T21:00:00Z'))
    expect(allowedAt([evenings], at('2026-12-09T00:59:00Z'))).toBe(true)
    expect(allowedAt([evenings], at('2026-12-09T01:00:00Z'))).toBe(false)
    // Friday's window runs into Saturday; Saturday's evening has none
    expect(allowedAt([evenings], at('2026-12-12T00:30:00Z'))).toBe(true)
    expect(allowedAt([evenings], at('2026-12-12T21:30:00Z'))).toBe(false)
    // the next allowed minute from a Saturday morning is Monday 22:00 Berlin
    expect(nextAllowed([evenings], at('2026-12-12T09:00:00Z'))).toBe(at('2026-12-14T21:00:00Z'))
  })

  it('a deny window closes what an allow window opens; deny windows alone allow the rest', () => {
    const freeze: SyncWindow = {
      kind: 'deny',
      schedule: '2026-12-24 00:00',
      durationMs: 48 * 3600_000,
      timeZone: 'UTC',
    }
    expect(allowedAt([evenings, freeze], at('2026-12-24T21:30:00Z'))).toBe(false)
    expect(allowedAt([freeze], at('2026-12-23T12:00:00Z'))).toBe(true)
    expect(allowedAt([freeze], at('2026-12-25T12:00:00Z'))).toBe(false)
    expect(nextAllowed([freeze], at('2026-12-25T12:00:00Z'))).toBe(at('2026-12-26T00:00:00Z'))
  })

  it('reads shorthands, lists, ranges and repetitions; no time means midnight', () => {
    expect(parseCalendarEvent('daily')).toMatchObject({ hour: new Set([0]), minute: new Set([0]) })
    expect(parseCalendarEvent('sat,sun 02:30')).toMatchObject({
      weekdays: new Set([5, 6]),
      hour: new Set([2]),
      minute: new Set([30]),
    })
    expect(parseCalendarEvent('*/15')).toMatchObject({ hour: '*', minute: new Set([0, 15, 30, 45]) })
    expect(parseCalendarEvent('*-*-01')).toMatchObject({ day: new Set([1]), hour: new Set([0]) })
    expect(parseCalendarEvent('8..17:00/30 UTC')).toMatchObject({ minute: new Set([0, 30]) })
  })

  test.prop([fc.integer({ min: at('2026-01-01T00:00:00Z'), max: at('2027-01-01T00:00:00Z') })], { numRuns: 30 })(
    'the next allowed time is allowed, and nothing before it is',
    (t) => {
      const next = nextAllowed([evenings], t)
      expect(next).toBeDefined()
      expect(allowedAt([evenings], next!)).toBe(true)
      if (next! - 60_000 >= t) expect(allowedAt([evenings], next! - 60_000)).toBe(false)
    },
  )

  it('outside its windows, disruptive changes wait (and say until when); hotplug ones do not', () => {
    const reboot = makeAction({ type: 'update', disruption: 'reboot', requests: [] })
    const hot = makeAction({ type: 'update', disruption: 'hotplug', requests: [] })
    const del = makeAction({ type: 'delete', disruption: 'none', requests: [] })
    expect([reboot, hot, del].map(disruptive)).toEqual([true, false, true])
    const [hold] = windowHolds([evenings], at('2026-12-12T09:00:00Z'))
    expect(hold?.message).toBe("outside the cluster's sync windows: waits until 2026-12-14T21:00:00.000Z")
    expect(windowHolds([evenings], at('2026-12-08T21:30:00Z'))).toEqual([])
    expect(windowHolds([], at('2026-12-12T09:00:00Z'))).toEqual([])
  })
})
