import Table from "cli-table3";

/** One column of a list table: its heading and how to show a row's cell. */
export type Column<T> = readonly [heading: string, cell: (row: T) => string];

const PLAIN = { head: [], border: [] };

/** Shortens text for a table cell; `get` shows it whole. */
export function clip(text: string, max = 48): string {
  const oneLine = text.replace(/\s+/g, " ");
  return oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine;
}

/** Renders rows as a table, or a short note when there are none. */
export function table<T>(rows: readonly T[], columns: readonly Column<T>[], empty = "Nothing found."): string {
  if (rows.length === 0) return empty;
  const t = new Table({ head: columns.map(([heading]) => heading), style: PLAIN });
  for (const row of rows) t.push(columns.map(([, cell]) => cell(row)));
  return t.toString();
}

/** Renders one resource as a two-column table of field and value. */
export function record(fields: Record<string, string | number | boolean | null>): string {
  const t = new Table({ style: PLAIN });
  for (const [name, value] of Object.entries(fields)) t.push({ [name]: value === null ? "-" : String(value) });
  return t.toString();
}

export function writeOut(text: string): void {
  process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
}

export function writeJson(value: unknown): void {
  writeOut(JSON.stringify(value, null, 2));
}
