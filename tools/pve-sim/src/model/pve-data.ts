/**
 * PVE's data tables that ProxOps's schema also reads, kept once in the repository's `pve-data/` folder (see its
 * README.md): the simulator reads the JSON files as they are, the schema package compiles a generated copy.
 */
import { readFileSync } from 'node:fs'

/** `pve-data/firewall.json` */
export interface FirewallData {
  /** macro name (preferred spelling) -> its template lines, each line's fixed keys in order */
  macros: Record<string, Record<string, string>[]>
  icmpTypes: string[]
  icmpv6Types: string[]
  services: string[]
  protocols: Record<string, number>
}

/** `pve-data/calendar-event.json` */
export interface CalendarEventData {
  /** weekday name or abbreviation -> Monday = 0 ... Sunday = 6 */
  weekdays: Record<string, number>
  /** each date/time component's lowest value (where `*\/R` starts) and its exclusive limit */
  components: Record<'year' | 'month' | 'day' | 'hour' | 'minute' | 'second', { first: number; below: number }>
  /** a shorthand -> the values it fixes per component (`days` are weekdays) */
  shorthands: Record<
    string,
    Partial<Record<'days' | 'year' | 'month' | 'day' | 'hour' | 'minute' | 'second', number[]>>
  >
}

// src/model/ and dist/model/ are both four levels below the repository root
const read = (file: string): unknown =>
  JSON.parse(readFileSync(new URL(`../../../../pve-data/${file}`, import.meta.url), 'utf8'))

export const firewallData = read('firewall.json') as FirewallData
export const calendarEventData = read('calendar-event.json') as CalendarEventData
