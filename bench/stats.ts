/**
 * Medians and spreads of repeated runs, and the loop that repeats a run until its spread is small enough to read.
 */

/** The q-quantile (0..1) of the values, interpolated between neighbours. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) throw new Error("quantile of no values");
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const below = Math.floor(at);
  const above = Math.min(below + 1, sorted.length - 1);
  return sorted[below]! + (sorted[above]! - sorted[below]!) * (at - below);
}

export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

/** How far apart the middle half of the values lies, relative to their median (0 when they all agree). */
export function relativeSpread(values: readonly number[]): number {
  const middle = median(values);
  if (middle === 0) return 0;
  return Math.abs((quantile(values, 0.75) - quantile(values, 0.25)) / middle);
}

/** Median, quartiles and extremes, rounded for the JSON file, under names prefixed with `name`. */
export function summary(name: string, values: readonly number[], digits = 3): Record<string, number> {
  const round = (n: number) => Number(n.toFixed(digits));
  return {
    [`${name}.median`]: round(median(values)),
    [`${name}.p25`]: round(quantile(values, 0.25)),
    [`${name}.p75`]: round(quantile(values, 0.75)),
    [`${name}.min`]: round(Math.min(...values)),
    [`${name}.max`]: round(Math.max(...values)),
  };
}

export interface Rounds {
  /** Runs at least this many rounds. */
  min: number;
  /** And at most this many, however wide the spread. */
  max: number;
  /** Stops once the middle half of the watched values lies within this fraction of their median… */
  spread: number;
  /** …or, for a figure with a target, once the middle half lies wholly on one side of it (the verdict is settled). */
  target?: number;
}

/** A whole number from the environment, or the default when it is unset or not a positive integer. */
export function envCount(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

/** Whether more rounds would tell nothing new: the spread is small, or the verdict against the target is clear. */
export function settled(values: readonly number[], rounds: Pick<Rounds, "spread" | "target">): boolean {
  if (relativeSpread(values) <= rounds.spread) return true;
  if (rounds.target === undefined) return false;
  const low = quantile(values, 0.25);
  const high = quantile(values, 0.75);
  return high < rounds.target || low > rounds.target;
}

/**
 * Runs `round` (one interleaved round of every side, returning the value to watch, e.g. the round's ratio) until the
 * watched values settle or `max` rounds have run. Returns every round's result, in order.
 */
export async function repeatRounds<T>(
  rounds: Rounds,
  round: (index: number) => Promise<T>,
  watched: (result: T) => number,
): Promise<T[]> {
  const results: T[] = [];
  while (results.length < rounds.max) {
    results.push(await round(results.length));
    if (results.length >= rounds.min && settled(results.map(watched), rounds)) break;
  }
  return results;
}
