/**
 * The shapes of the PVE data tables in the repository's `pve-data/` folder, which `src/pve-data.ts` (generated
 * from them) holds for this package. The simulator reads the same files.
 */

/** `pve-data/firewall.json` */
export interface FirewallData {
  /** macro name (preferred spelling) -> its template lines, each line's fixed keys in order */
  readonly macros: Readonly<Record<string, readonly Readonly<Record<string, string>>[]>>
  readonly icmpTypes: readonly string[]
  readonly icmpv6Types: readonly string[]
  readonly services: readonly string[]
  readonly protocols: Readonly<Record<string, number>>
}

type CalendarComponent = 'year' | 'month' | 'day' | 'hour' | 'minute' | 'second'

/** `pve-data/calendar-event.json` */
export interface CalendarEventData {
  /** weekday name or abbreviation -> Monday = 0 ... Sunday = 6 */
  readonly weekdays: Readonly<Record<string, number>>
  /** each date/time component's lowest value (where `*\/R` starts) and its exclusive limit */
  readonly components: Readonly<Record<CalendarComponent, { readonly first: number; readonly below: number }>>
  /** a shorthand -> the values it fixes per component (`days` are weekdays) */
  readonly shorthands: Readonly<
    Record<string, Readonly<Partial<Record<CalendarComponent | 'days', readonly number[]>>>>
  >
}
