// Shared pieces: the router, the app context, data polling, and small accessible components (the words
// they show problems and times in are format.ts's).
import type { Environment, Page, Tagged } from "@flagstaff/sdk";
import { createContext, type ReactNode, useCallback, useContext, useEffect, useId, useRef, useState } from "react";
import type { Connection, Session } from "./api/session.js";
import { errorText, fieldError, isConflict } from "./format.js";

// ---- Router: paths under /console/, History API ----

export const BASE = "/console";

export function currentPath(): string {
  const path = window.location.pathname;
  return path.startsWith(BASE) ? path.slice(BASE.length) || "/" : "/";
}

let leaveGuard: (() => boolean) | undefined;

/**
 * While a page holds unsaved edits (the flag page's pending changes), `guard` asks before the console
 * leaves it for another page or environment, and answers whether to go. Undefined: leave freely.
 */
export function guardLeaving(guard: (() => boolean) | undefined): void {
  leaveGuard = guard;
}

/** Whether the page shown may be left now (asking its guard, if it has one). */
export function mayLeave(): boolean {
  return leaveGuard === undefined || leaveGuard();
}

export function navigate(to: string, replace = false): void {
  if (!mayLeave()) return;
  const url = `${BASE}${to}`;
  if (replace) window.history.replaceState(null, "", url);
  else window.history.pushState(null, "", url);
  window.dispatchEvent(new PopStateEvent("popstate"));
}

export function usePath(): string {
  const [path, setPath] = useState(currentPath);
  useEffect(() => {
    const update = () => setPath(currentPath());
    window.addEventListener("popstate", update);
    return () => window.removeEventListener("popstate", update);
  }, []);
  return path;
}

export function Link(props: { to: string; children: ReactNode; className?: string; current?: boolean }) {
  return (
    <a
      href={`${BASE}${props.to}`}
      className={props.className}
      aria-current={props.current ? "page" : undefined}
      onClick={(event) => {
        if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
        event.preventDefault();
        navigate(props.to);
      }}
    >
      {props.children}
    </a>
  );
}

export const enc = encodeURIComponent;

// ---- App context ----

export interface AppContext {
  session: Session;
  conn: Connection;
  /** The project shown (the key's own for project keys). */
  project: string;
  /** The caller may change the project (write or admin on it); `readOnlyReason` says why not. */
  canWrite: boolean;
  /** Why every change to the project is disabled, shown next to the disabled controls; undefined when allowed. */
  readOnlyReason: string | undefined;
  /** An admin key or an admin person: every project, and the people. */
  isAdmin: boolean;
  /** Admin of the project shown (its keys, webhooks and access). */
  isProjectAdmin: boolean;
  /**
   * Why the caller, who may write, may not change configurations in the environment shown: it is protected
   * and they are not an admin of the project. Undefined otherwise. See ConfigurationRights.
   */
  protectedReason: string | undefined;
  /** The environment shown and changed (undefined outside a project); `conn.client` acts on it. */
  environment: Environment | undefined;
  /** The project's environments this key may see, in the project's order. */
  environments: Environment[];
  /** Shows another environment (remembered for the project, and named in the URL). */
  selectEnvironment: (id: string) => void;
  /** Reads the project's environments again (after one was created, changed, moved or deleted). */
  reloadEnvironments: () => void;
}

export const Ctx = createContext<AppContext | undefined>(undefined);

export function useApp(): AppContext {
  const value = useContext(Ctx);
  if (!value) throw new Error("no app context");
  return value;
}

/**
 * Wraps the parts of a page that change a flag's configuration in the environment shown (status,
 * percentages, targeting, attached actors and segments): in a protected environment only the project's
 * admins may, so inside it `canWrite` is false for the others and `readOnlyReason` says why. The flag's
 * definition (description, variants) stays outside: it belongs to every environment.
 */
export function ConfigurationRights(props: { children: ReactNode }) {
  const app = useApp();
  if (app.readOnlyReason !== undefined || app.protectedReason === undefined) return <>{props.children}</>;
  return (
    <Ctx.Provider value={{ ...app, canWrite: false, readOnlyReason: app.protectedReason }}>
      {props.children}
    </Ctx.Provider>
  );
}

// ---- Data: load, then poll every few seconds so changes made elsewhere appear ----

export const POLL_MS = 4000;

export interface Data<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => Promise<void>;
}

export function useData<T>(load: () => Promise<T>, deps: readonly unknown[], pollMs = POLL_MS): Data<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(true);
  const loadRef = useRef(load);
  loadRef.current = load;
  const generation = useRef(0);

  const run = useCallback(async (reset: boolean) => {
    const mine = reset ? ++generation.current : generation.current;
    if (reset) setLoading(true);
    try {
      const value = await loadRef.current();
      if (mine !== generation.current) return;
      setData(value);
      setError(undefined);
    } catch (e) {
      if (mine !== generation.current) return;
      setError(e);
      if (reset) setData(undefined);
    } finally {
      if (mine === generation.current) setLoading(false);
    }
  }, []);

  useEffect(() => {
    setData(undefined);
    void run(true);
    if (pollMs <= 0) return;
    const timer = window.setInterval(() => {
      if (!document.hidden) void run(false);
    }, pollMs);
    return () => window.clearInterval(timer);
  }, deps);

  return { data, error, loading, reload: () => run(false) };
}

/**
 * A flag or segment with its ETag, for edits with If-Match. `etag()` is the tag of the version on screen;
 * a form that holds unsaved edits pins the tag it started from (`basis`), so a change made elsewhere since
 * then is refused (412) instead of overwritten. On 412 the latest version is loaded and `conflicts` moves,
 * so such forms drop their edits; the form's ErrorText says what happened.
 */
export function useTagged<T, I>(
  get: () => Promise<Tagged<T>>,
  update: (input: I, ifMatch: string | undefined) => Promise<Tagged<T>>,
  deps: readonly unknown[],
): {
  data: Data<T>;
  etag: () => string | undefined;
  patch: (input: I, basis?: string) => Promise<void>;
  conflicts: number;
} {
  const etag = useRef<string | undefined>(undefined);
  const writes = useRef(0);
  const [conflicts, setConflicts] = useState(0);
  const data = useData(async () => {
    // A poll that overlapped a write may hold the version before it: read again, so data and tag agree.
    for (let attempt = 0; ; attempt++) {
      const seen = writes.current;
      const tagged = await get();
      if (seen === writes.current || attempt === 2) {
        etag.current = tagged.etag;
        return tagged.value;
      }
    }
  }, deps);
  const patch = async (input: I, basis?: string) => {
    writes.current++;
    try {
      const result = await update(input, basis ?? etag.current);
      writes.current++;
      etag.current = result.etag;
      await data.reload();
    } catch (error) {
      writes.current++;
      if (isConflict(error)) {
        setConflicts((n) => n + 1);
        await data.reload();
      }
      throw error;
    }
  };
  return { data, etag: () => etag.current, patch, conflicts };
}

/** Runs an action, keeping its error to show next to the control that caused it. */
export function useAction(): {
  busy: boolean;
  error: unknown;
  run: (action: () => Promise<void>) => Promise<boolean>;
  clear: () => void;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const run = async (action: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
      return true;
    } catch (e) {
      setError(e);
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run, clear: () => setError(undefined) };
}

// ---- Components ----

export function ErrorText(props: { error: unknown; id?: string; shownFields?: readonly string[] }) {
  if (props.error === undefined || props.error === null) return null;
  const text = errorText(props.error, props.shownFields);
  if (text === "") return null;
  return (
    <p className="error" role="alert" id={props.id}>
      {text}
    </p>
  );
}

/** A form's last row: its submit button (disabled while it runs) and Cancel. */
export function SubmitOrCancel(props: { label: string; busy: boolean; onCancel: () => void }) {
  return (
    <div className="row">
      <button type="submit" className="primary" disabled={props.busy}>
        {props.label}
      </button>
      <button type="button" onClick={props.onCancel}>
        Cancel
      </button>
    </div>
  );
}

/**
 * A text field with its limits up front (maxlength, pattern, a counter when it has a maximum) and the
 * server's complaint about it, in one sentence, right under it (`field` is the name the API uses).
 */
export function TextField(props: {
  id: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
  /** The API's name for the field, to find its error in a validation problem. */
  field: string;
  error?: unknown;
  maxLength?: number;
  pattern?: string;
  help?: ReactNode;
  required?: boolean;
  multiline?: boolean;
  disabled?: boolean;
  /** The input's type (text by default): "password", "email"… */
  type?: string;
  autoComplete?: string;
}) {
  const problem = fieldError(props.error, props.field, props.label);
  const describedBy = [
    props.help ? `${props.id}-help` : "",
    props.maxLength ? `${props.id}-count` : "",
    problem ? `${props.id}-error` : "",
  ]
    .filter(Boolean)
    .join(" ");
  const common = {
    id: props.id,
    value: props.value,
    maxLength: props.maxLength,
    required: props.required,
    disabled: props.disabled,
    "aria-invalid": problem ? true : undefined,
    "aria-describedby": describedBy || undefined,
  };
  return (
    <div className="field">
      <label htmlFor={props.id}>{props.label}</label>
      {props.multiline ? (
        <textarea {...common} rows={3} onChange={(e) => props.onChange(e.target.value)} />
      ) : (
        <input
          {...common}
          type={props.type}
          autoComplete={props.autoComplete}
          pattern={props.pattern}
          onChange={(e) => props.onChange(e.target.value)}
        />
      )}
      {props.help && (
        <span id={`${props.id}-help`} className="help">
          {props.help}
        </span>
      )}
      {props.maxLength !== undefined && (
        <span id={`${props.id}-count`} className="help counter">
          {props.value.length.toLocaleString()} / {props.maxLength.toLocaleString()} characters
        </span>
      )}
      {problem && (
        <span id={`${props.id}-error`} className="error field-error" role="alert">
          {problem}
        </span>
      )}
    </div>
  );
}

export function Loading(props: { what: string }) {
  return (
    <p className="muted" aria-live="polite">
      Loading {props.what}…
    </p>
  );
}

export function Pager(props: {
  page: Page<unknown> | undefined;
  onPrevious: (cursor: string) => void;
  onNext: (cursor: string) => void;
  label: string;
}) {
  const before = props.page?.pagination.before ?? null;
  const after = props.page?.pagination.after ?? null;
  return (
    <nav className="pager" aria-label={`${props.label} pages`}>
      <button type="button" disabled={before === null} onClick={() => before && props.onPrevious(before)}>
        ← Previous
      </button>
      <button type="button" disabled={after === null} onClick={() => after && props.onNext(after)}>
        Next →
      </button>
    </nav>
  );
}

export interface Cursor {
  before?: string;
  after?: string;
}

/** A new key's secret, shown this once with a copy button, until the person says they stored it. */
export function KeySecret(props: {
  name: string;
  secret: string;
  headingId: string;
  level: 2 | 3;
  onDone: () => void;
}) {
  const Heading = props.level === 2 ? "h2" : "h3";
  return (
    <div className="card secret" role="alert" aria-labelledby={props.headingId}>
      <Heading id={props.headingId}>Key "{props.name}" created</Heading>
      <p className="warning">Copy the secret now: it is shown this once and can never be shown again.</p>
      <p>
        <code data-testid="secret">{props.secret}</code> <CopyButton text={props.secret} label="Copy secret" />
      </p>
      <button type="button" onClick={props.onDone}>
        I stored it
      </button>
    </div>
  );
}

export function CopyButton(props: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(props.text);
          setCopied(true);
          window.setTimeout(() => setCopied(false), 2000);
        } catch {
          setCopied(false);
        }
      }}
    >
      {copied ? "Copied" : props.label}
      <span className="visually-hidden" aria-live="polite">
        {copied ? " copied to the clipboard" : ""}
      </span>
    </button>
  );
}

/**
 * Puts focus back on the control that opened a dialog; when that control is gone (the row it was in was
 * deleted) or disabled, on the page's main region, so keyboard users never land on <body>.
 */
export function returnFocus(opener: HTMLElement | null): void {
  const usable = opener?.isConnected && !(opener as HTMLButtonElement).disabled;
  if (usable) opener.focus();
  else document.getElementById("main")?.focus();
}

/** A modal confirmation (native <dialog>: focus is trapped and Escape cancels). */
export function Confirm(props: {
  open: boolean;
  title: string;
  children: ReactNode;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
  /** When set, the confirm button stays disabled until this text is typed. */
  typeToConfirm?: string;
  /** Keeps the confirm button disabled (while what it would do is not known yet, or there is nothing to do). */
  confirmDisabled?: boolean;
  danger?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  // Several dialogs share a page (a flag's status and its deletion): each needs its own title id, or the
  // second is announced by the first one's title.
  const titleId = useId();
  // The control that opened the dialog, to give focus back to when it closes however it closes.
  const opener = useRef<HTMLElement | null>(null);
  const [typed, setTyped] = useState("");
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (props.open && !dialog.open) {
      opener.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
      setTyped("");
      dialog.showModal();
    } else if (!props.open && dialog.open) {
      dialog.close();
      returnFocus(opener.current);
    }
  }, [props.open]);
  const blocked =
    (props.typeToConfirm !== undefined && typed !== props.typeToConfirm) || props.confirmDisabled === true;
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        props.onCancel();
      }}
    >
      <h2 id={titleId}>{props.title}</h2>
      <div>{props.children}</div>
      {props.typeToConfirm !== undefined && (
        <p>
          <label>
            Type <strong>{props.typeToConfirm}</strong> to confirm
            <input value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" />
          </label>
        </p>
      )}
      <div className="row">
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
        <button
          type="button"
          className={props.danger ? "danger" : "primary"}
          disabled={blocked}
          onClick={props.onConfirm}
        >
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}

export function StatusBadge(props: { status: string }) {
  return <span className={`badge status-${props.status}`}>{props.status}</span>;
}

/**
 * The danger zone of a flag's or a segment's page: a delete button, a confirmation that needs the name
 * typed, and If-Match with the ETag of the version shown when the button was pressed (a change made
 * meanwhile is then a 412, not a silent delete).
 */
export function DeleteZone(props: {
  /** What is deleted, in words: "flag", "segment". */
  noun: string;
  name: string;
  etag: () => string | undefined;
  /** Deletes with the given If-Match; answers when done. */
  remove: (ifMatch: string | undefined) => Promise<unknown>;
  /** Where to go once deleted. */
  after: string;
  children: ReactNode;
}) {
  const [open, setOpen] = useState(false);
  const basis = useRef<string | undefined>(undefined);
  const action = useAction();
  const titleId = `delete-${props.noun}-title`;
  return (
    <section className="card danger-zone" aria-labelledby={titleId}>
      <h2 id={titleId}>Delete this {props.noun}</h2>
      <button
        type="button"
        className="danger"
        onClick={() => {
          basis.current = props.etag();
          setOpen(true);
        }}
      >
        Delete {props.noun}
      </button>
      <ErrorText error={action.error} />
      <Confirm
        open={open}
        danger
        title={`Delete ${props.name}?`}
        confirmLabel={`Delete ${props.noun}`}
        typeToConfirm={props.name}
        onCancel={() => setOpen(false)}
        onConfirm={async () => {
          setOpen(false);
          if (await action.run(async () => void (await props.remove(basis.current)))) navigate(props.after);
        }}
      >
        {props.children}
      </Confirm>
    </section>
  );
}
