import Table from "cli-table3";

/** One column of a list table: its heading and how to show a row's cell. */
export type Column<T> = readonly [heading: string, cell: (row: T) => string];

const PLAIN = { head: [], border: [] };

/** Shortens text for a table cell; `get` shows it whole. */
export function clip(text: string, max = 48): string {
  const oneLine = text.replace(/\s+/g, " ");
  return oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine;
}

/** Words as help says alternatives: "string, number or object". */
export function alternatives(words: readonly string[]): string {
  return words.length <= 1 ? (words[0] ?? "") : `${words.slice(0, -1).join(", ")} or ${words[words.length - 1]}`;
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

/** Something text is written to: process.stdout, or a test's collector. */
export interface Writer {
  write(text: string): unknown;
}

/** Where the CLI reads its configuration and writes its output: the process's, or a test's. */
export interface CliIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdout: Writer;
  readonly stderr: Writer;
  /** Reads all of standard input (for --password-stdin); the process's when absent. */
  readonly readStdin?: () => Promise<string>;
}

/** Writes text to `out`, ending it with a newline. */
export function writeOut(out: Writer, text: string): void {
  out.write(text.endsWith("\n") ? text : `${text}\n`);
}

export function writeJson(out: Writer, value: unknown): void {
  writeOut(out, JSON.stringify(value, null, 2));
}
