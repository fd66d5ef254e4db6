// The project's segments and flags, read whole for the targeting forms' pickers.
import type { Segment } from "@flagstaff/sdk";
import { allPages } from "../lists.js";
import { useApp, useData } from "../ui.js";

// ---- The project's segments and flags, for pickers ----

export function useSegments(): readonly Segment[] | undefined {
  const { conn, project } = useApp();
  // Read once per page (no polling): a segment deleted meanwhile is the server's to refuse, at its rule.
  return useData(() => allPages((page) => conn.client.segments.list(project).page(page)), [project], 0).data;
}
