// A segment's conditions on its page: rule-based membership, checked with core's validator through the
// SDK before it is sent, saved with If-Match; the server's refusal placed at the condition at fault.
import { type Segment, type UpdateSegmentInput, validateSegmentConditions } from "@flagstaff/sdk";
import { useEffect, useRef, useState } from "react";
import { ErrorText, useAction, useApp } from "../ui.js";
import { isConflict } from "../format.js";
import { AttributeSuggestions, ConditionsEditor } from "./conditions-editor.js";
import { type ConditionDraft, conditionDrafts, toCondition } from "./targeting-drafts.js";
import { localMessage, parsePath, type Placed, ProblemList, serverProblems } from "./targeting-problems.js";

// ---- A segment's conditions ----

export function SegmentConditionsPanel(props: {
  segment: Segment;
  patch: (input: UpdateSegmentInput, basis?: string) => Promise<void>;
  etag: () => string | undefined;
}) {
  const { canWrite, readOnlyReason } = useApp();
  const s = props.segment;
  const [conditions, setConditions] = useState<ConditionDraft[]>(() => conditionDrafts(s.conditions ?? []));
  const [dirty, setDirty] = useState(false);
  const [refused, setRefused] = useState<Placed[]>([]);
  const basis = useRef<string | undefined>(undefined);
  const action = useAction();
  const saved = JSON.stringify(s.conditions ?? []);
  useEffect(() => {
    if (!dirty) setConditions(conditionDrafts(s.conditions ?? []));
  }, [saved, dirty]);
  const body = conditions.map(toCondition);
  const client: Placed[] = validateSegmentConditions(body).map((p) => {
    const where = parsePath(p.path);
    return {
      section: "conditions",
      condition: where.condition === undefined ? undefined : conditions[where.condition]?.key,
      path: p.path,
      message: localMessage(p.message),
      server: false,
    };
  });
  const problems = [...client, ...refused];
  const reason = !canWrite
    ? readOnlyReason
    : client.length > 0
      ? `Cannot save yet: condition ${conditions.findIndex((c) => c.key === client[0]?.condition) + 1}: ${client[0]?.message}`
      : !dirty
        ? "No changes to save."
        : undefined;
  return (
    <form
      className="card"
      aria-labelledby="segment-conditions-title"
      onSubmit={async (e) => {
        e.preventDefault();
        if (reason !== undefined) return;
        setRefused([]);
        const keys = conditions.map((c) => c.key);
        let error: unknown;
        const ok = await action.run(async () => {
          try {
            await props.patch({ conditions: body }, basis.current);
          } catch (err) {
            error = err;
            throw err;
          }
        });
        if (ok || isConflict(error)) setDirty(false);
        else setRefused(serverProblems(error, [], () => keys));
      }}
    >
      <h2 id="segment-conditions-title">Conditions</h2>
      <p className="help">
        A context is in this segment when one of its actors is a listed member, or when all of these conditions hold for
        its attributes. The member count and the member list count listed members only. Segments are project-wide: the
        same in every environment.
      </p>
      <AttributeSuggestions />
      <ConditionsEditor
        conditions={conditions}
        onChange={(next) => {
          if (!dirty) basis.current = props.etag();
          setDirty(true);
          setConditions(next);
        }}
        allowSegments={false}
        segments={undefined}
        problems={problems}
        disabled={!canWrite}
        owner="the segment"
      />
      <ProblemList problems={problems.filter((p) => p.condition === undefined)} />
      {refused.length === 0 && <ErrorText error={action.error} />}
      <SaveRow
        label="Save conditions"
        reasonId="segment-conditions-reason"
        reason={reason}
        reasonIsError={client.length > 0}
        busy={action.busy}
        dirty={dirty}
        onDiscard={() => {
          action.clear();
          setRefused([]);
          setDirty(false);
        }}
      />
    </form>
  );
}

/**
 * A form's Save button, disabled with its reason shown beneath it (and named as its description), and
 * Discard while there are changes: the targeting form's and the segment conditions' alike.
 */
function SaveRow(props: {
  label: string;
  reasonId: string;
  reason: string | undefined;
  /** The reason is a problem to fix (red), not a state such as "No changes to save." */
  reasonIsError: boolean;
  busy: boolean;
  dirty: boolean;
  onDiscard: () => void;
}) {
  return (
    <>
      <div className="row">
        <button
          type="submit"
          className="primary"
          disabled={props.reason !== undefined || props.busy}
          aria-describedby={props.reason ? props.reasonId : undefined}
        >
          {props.label}
        </button>
        {props.dirty && (
          <button type="button" onClick={props.onDiscard}>
            Discard changes
          </button>
        )}
      </div>
      {props.reason && (
        <p id={props.reasonId} className={props.reasonIsError ? "error" : "help"} data-testid="save-reason">
          {props.reason}
        </p>
      )}
    </>
  );
}
