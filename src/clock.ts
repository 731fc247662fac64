// Time comes from an injected clock, so month boundaries, leases and backoff can be tested.
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that tests move by hand. */
export class ManualClock implements Clock {
  #now: number;
  constructor(start: Date | string = '2026-01-15T12:00:00.000Z') {
    this.#now = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.#now);
  }
  set(to: Date | string): void {
    this.#now = new Date(to).getTime();
  }
  advance(ms: number): void {
    this.#now += ms;
  }
}
