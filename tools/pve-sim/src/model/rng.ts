/** A small seeded PRNG (mulberry32): the simulator must be deterministic for a given seed. */
export class Rng {
  private state: number

  constructor(seed: number) {
    this.state = seed >>> 0
  }

  /** uniform in [0, 1) */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0
    let t = this.state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }

  int(maxExclusive: number): number {
    return Math.floor(this.next() * maxExclusive)
  }

  hexByte(): string {
    return this.int(256).toString(16).padStart(2, '0')
  }

  /** an RFC 4122 version 4 uuid, lower-case as PVE prints them */
  uuid(): string {
    const b: number[] = []
    for (let i = 0; i < 16; i++) b.push(this.int(256))
    b[6] = ((b[6] ?? 0) & 0x0f) | 0x40
    b[8] = ((b[8] ?? 0) & 0x3f) | 0x80
    const h = b.map((x) => x.toString(16).padStart(2, '0')).join('')
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
  }

  /** a MAC with the datacenter default prefix BC:24:11, upper-case (qemu-server/pve-container) */
  mac(): string {
    return ['BC', '24', '11', this.hexByte(), this.hexByte(), this.hexByte()].join(':').toUpperCase()
  }
}
