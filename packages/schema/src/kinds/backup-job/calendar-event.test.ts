import { describe, expect, it } from 'vitest'
import { calendarEventError } from './calendar-event.js'

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
