// Requests in flight, and close()'s wait for them to end.

/** Counts requests in flight; once closing, the last one to end releases `drained`. */
export interface Drain {
  readonly closing: boolean;
  enter(): void;
  leave(): void;
  /** Stops new requests (they see `closing`) and resolves when those in flight have ended. */
  close(): Promise<void>;
}

/** A drain with nothing in flight. */
export function createDrain(): Drain {
  let inFlight = 0;
  let closing = false;
  let endDrain!: () => void;
  const drained = new Promise<void>((resolve) => (endDrain = resolve));
  return {
    get closing() {
      return closing;
    },
    enter() {
      inFlight++;
    },
    leave() {
      if (--inFlight === 0 && closing) endDrain();
    },
    close() {
      closing = true;
      if (inFlight === 0) endDrain();
      return drained;
    },
  };
}
