/**
 * One measured figure of the bench, as the table shows it and the JSON file stores it. Every ratio is taken within one
 * run, the two sides interleaved, so the shared machine's noise hits both alike.
 */
export interface Figure {
  /** Stable key in the JSON file, e.g. `call.stdio.ratio`. */
  id: string;
  /** The row label in the table. */
  label: string;
  value: number;
  /** `×`, `ms`, `MB`, `tokens`, `chars`, `calls/s`, … */
  unit: string;
  /** What the issue asks of this figure, if anything. */
  target?: { op: "<=" | ">="; value: number };
  /** Raw medians, spreads and counts behind the value. */
  detail?: Record<string, number | string>;
}

/** A group of figures measured together (calls, startup, context, install). */
export interface FigureSection {
  title: string;
  measure(): Promise<Figure[]>;
}

/** Whether a figure meets its target (true when it has none). */
export function meetsTarget(figure: Figure): boolean {
  if (!figure.target) return true;
  return figure.target.op === "<=" ? figure.value <= figure.target.value : figure.value >= figure.target.value;
}
