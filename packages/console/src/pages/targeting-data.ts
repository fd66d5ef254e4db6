// The project's segments and flags, read whole for the targeting forms' pickers.
import type { Segment } from "@flagstaff/sdk";
import { useApp, useData } from "../ui.js";

// ---- The project's segments and flags, for pickers ----

export async function allPages<T>(
  list: (after?: string) => Promise<{ data: T[]; pagination: { after: string | null } }>,
  max = 20,
): Promise<T[]> {
  const out: T[] = [];
  let after: string | undefined;
  for (let i = 0; i < max; i++) {
    const page = await list(after);
    out.push(...page.data);
    if (!page.pagination.after) break;
    after = page.pagination.after;
  }
  return out;
}

export function useSegments(): readonly Segment[] | undefined {
  const { conn, project } = useApp();
  // Read once per page (no polling): a segment deleted meanwhile is the server's to refuse, at its rule.
  return useData(
    () => allPages((after) => conn.client.segments.list(project).page({ limit: 100, after })),
    [project],
    0,
  ).data;
}
