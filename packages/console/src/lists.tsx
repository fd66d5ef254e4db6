// What the list pages share: a page of rows read by cursor (and polled), the rows' table with its loading
// and empty states, and whole lists read page by page for the pickers.
import type { Flag, Page, PageOptions } from "@flagstaff/sdk";
import type { ReactElement, ReactNode } from "react";
import { useState } from "react";
import { PAGE_MAX, PAGE_SIZE } from "./contract.js";
import { type Cursor, type Data, enc, Link, Loading, POLL_MS, StatusBadge, useApp, useData } from "./ui.js";

/** A page of a list, with what its Pager needs to move to the page before or after. */
export interface Paged<T> extends Data<Page<T>> {
  /** Spread into a Pager: the page shown and the moves from it. */
  paging: {
    page: Page<T> | undefined;
    onPrevious: (before: string) => void;
    onNext: (after: string) => void;
  };
  /** Back to the first page (after the search changed). */
  first: () => void;
}

/**
 * Reads one page of a list (`load` is given the page to read), again when `deps` or the page change, and
 * polls it like useData.
 */
export function usePaged<T>(
  load: (page: PageOptions) => Promise<Page<T>>,
  deps: readonly unknown[],
  options: { limit?: number; pollMs?: number } = {},
): Paged<T> {
  const [cursor, setCursor] = useState<Cursor>({});
  const list = useData(
    () => load({ limit: options.limit ?? PAGE_SIZE, ...cursor }),
    [...deps, cursor.before, cursor.after],
    options.pollMs ?? POLL_MS,
  );
  return {
    ...list,
    paging: {
      page: list.data,
      onPrevious: (before) => setCursor({ before }),
      onNext: (after) => setCursor({ after }),
    },
    first: () => setCursor({}),
  };
}

/** Every item of a list, read PAGE_MAX at a time, up to `maxPages` pages. */
export async function allPages<T>(
  load: (page: { limit: number; after?: string }) => Promise<Page<T>>,
  maxPages = 20,
): Promise<T[]> {
  const out: T[] = [];
  let after: string | undefined;
  for (let i = 0; i < maxPages; i++) {
    const page = await load({ limit: PAGE_MAX, after });
    out.push(...page.data);
    if (!page.pagination.after) break;
    after = page.pagination.after;
  }
  return out;
}

/** A column's header: its text, or the whole <th> with its key (one that says its sort order); false: none. */
export type Column = string | ReactElement | false | undefined;

/**
 * A list's rows: "Loading…" until the first read answers (when `what` names what loads), `empty` when
 * there are none, else what `children` makes of them.
 */
export function ListRows<T>(props: {
  rows: readonly T[] | undefined;
  loading?: boolean;
  /** What is loading, in words ("keys"); without it, nothing is said while it loads. */
  what?: string;
  /** Said when there are no rows. */
  empty: ReactNode;
  children: (rows: readonly T[]) => ReactNode;
}) {
  const { rows } = props;
  if (rows === undefined) return props.loading && props.what !== undefined ? <Loading what={props.what} /> : null;
  if (rows.length === 0) return <p>{props.empty}</p>;
  return <>{props.children(rows)}</>;
}

/** A list's rows as a table (scrolling sideways on its own when wider than the page), as ListRows says them. */
export function ListTable<T>(props: {
  rows: readonly T[] | undefined;
  loading: boolean;
  what: string;
  empty: ReactNode;
  /** The table's accessible name. */
  label: string;
  columns: readonly Column[];
  /** A last column for the rows' buttons, its header for screen readers only. */
  actions?: boolean;
  /** A row (or a row and its error's), keyed. */
  row: (item: T) => ReactNode;
}) {
  return (
    <ListRows rows={props.rows} loading={props.loading} what={props.what} empty={props.empty}>
      {(rows) => (
        <div className="table-scroll">
          <table aria-label={props.label}>
            <thead>
              <tr>
                {props.columns.map((column) =>
                  typeof column === "string" ? (
                    <th key={`column-${column}`} scope="col">
                      {column}
                    </th>
                  ) : (
                    column
                  ),
                )}
                {props.actions && (
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>{rows.map(props.row)}</tbody>
          </table>
        </div>
      )}
    </ListRows>
  );
}

/** Flags as links to their pages, each with its status in the environment shown. */
export function FlagList(props: { flags: readonly Flag[] }) {
  const { project } = useApp();
  return (
    <ul className="plain">
      {props.flags.map((f) => (
        <li key={f.id}>
          <Link to={`/p/${enc(project)}/flags/${enc(f.name)}`}>{f.name}</Link> <StatusBadge status={f.status} />
        </li>
      ))}
    </ul>
  );
}

/**
 * Actions on a list's rows (a person's role, their removal): which row one is running on, and the error of
 * the one that failed, to show under its row. After each, the list is read again.
 */
export function useRowActions(reload: () => Promise<void>): {
  /** Runs an action on the row `id`; answers whether it succeeded. */
  act: (id: string, action: () => Promise<unknown>) => Promise<boolean>;
  busy: (id: string) => boolean;
  error: (id: string) => unknown;
  /** Forgets the last error (when another action on a row starts with a dialog). */
  clear: () => void;
} {
  const [failed, setFailed] = useState<{ id: string; error: unknown } | undefined>(undefined);
  const [busy, setBusy] = useState<string | undefined>(undefined);
  return {
    act: async (id, action) => {
      setBusy(id);
      setFailed(undefined);
      try {
        await action();
        await reload();
        return true;
      } catch (error) {
        setFailed({ id, error });
        return false;
      } finally {
        setBusy(undefined);
      }
    },
    busy: (id) => busy === id,
    error: (id) => (failed?.id === id ? failed.error : undefined),
    clear: () => setFailed(undefined),
  };
}

/**
 * A list page's "New …" button, beside its title: disabled for those who may not change the project, with
 * the reason beside it (`reasonId` names it).
 */
export function NewButton(props: { label: string; reasonId: string; onClick: () => void }) {
  const { canWrite, readOnlyReason } = useApp();
  return (
    <>
      <button
        type="button"
        className="primary"
        disabled={!canWrite}
        aria-describedby={canWrite ? undefined : props.reasonId}
        onClick={props.onClick}
      >
        {props.label}
      </button>
      {!canWrite && (
        <span id={props.reasonId} className="help">
          {readOnlyReason}
        </span>
      )}
    </>
  );
}
