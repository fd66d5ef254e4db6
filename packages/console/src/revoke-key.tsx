// Revoking a key from a list of keys, a project's (Keys) or a person's own (Me): the row's button, the
// confirmation, and the error of a revocation that failed.
import { type ReactNode, useState } from "react";
import { Confirm, useAction } from "./ui.js";

export function useRevokeKey<K extends { id: string; name: string }>(
  /** Revokes the key. */
  revoke: (key: K) => Promise<void>,
  /** Reads the list again once the key is revoked. */
  reload: () => Promise<void>,
): {
  /** Why the last revocation failed, for an ErrorText. */
  error: unknown;
  /** The Revoke button of a key's row. */
  button: (key: K) => ReactNode;
  /** The confirmation the button opens. */
  dialog: ReactNode;
} {
  const [revoking, setRevoking] = useState<K | undefined>(undefined);
  const action = useAction();
  return {
    error: action.error,
    button: (key) => (
      <button type="button" className="danger" aria-label={`Revoke ${key.name}`} onClick={() => setRevoking(key)}>
        Revoke
      </button>
    ),
    dialog: (
      <Confirm
        open={revoking !== undefined}
        danger
        title={`Revoke ${revoking?.name ?? ""}?`}
        confirmLabel="Revoke key"
        onCancel={() => setRevoking(undefined)}
        onConfirm={async () => {
          const key = revoking;
          setRevoking(undefined);
          if (key && (await action.run(() => revoke(key)))) await reload();
        }}
      >
        <p>Every request with this key is refused (401) from now on.</p>
      </Confirm>
    ),
  };
}
