import { describe, expect, it } from 'vitest'
import { calendarEventData, firewallData } from './pve-data.js'
import { FW_MACROS, PROTOCOLS, SERVICES } from './firewall-data.js'
import { computeNextEvent, parseCalendarEvent } from '../apidoc/calendar-event.js'

describe('pve-data/ tables as the simulator reads them', () => {
  it("PVE::Firewall $pve_fw_macros: each line's fixed keys in order, as key=value pairs", () => {
    expect(FW_MACROS.SSH).toEqual([
      [
        ['dport', '22'],
        ['proto', 'tcp'],
      ],
    ])
    expect(Object.keys(firewallData.macros)).toHaveLength(Object.keys(FW_MACROS).length)
  })

  it('get_etc_protocols and get_etc_services: netbase names', () => {
    expect(PROTOCOLS.tcp).toBe(6)
    expect(SERVICES.has('ssh')).toBe(true)
    expect(SERVICES.has('not-a-service')).toBe(false)
  })

  it('proxmox-time parse_calendar_event_incomplete: the shorthands and limits come from the table', () => {
    expect(Object.keys(calendarEventData.shorthands)).toContain('semi-annually')
    // `quarterly` fixes months 1, 4, 7, 10 at 00:00 on the 1st: the next after 2025-01-01T00:00:00Z is April 1st
    const quarterly = parseCalendarEvent('quarterly')
    expect(quarterly && computeNextEvent(quarterly, Date.UTC(2025, 0, 1) / 1000)).toBe(Date.UTC(2025, 3, 1) / 1000)
    const month = calendarEventData.components.month.below
    expect(parseCalendarEvent(`2025-${month}-01`)).toBeNull()
    expect(parseCalendarEvent(`2025-${month - 1}-01`)).not.toBeNull()
  })
})
