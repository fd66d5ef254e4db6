#!/usr/bin/env node
// What a check's segment membership lookup costs with 1,000 and with 1,000,000 members: ProjectState's
// isMember (a JavaScript Set per segment), on actor ids sliced from query strings as the check's fast
// path slices them (fresh strings, so each lookup hashes its id), 45 % members and 55 % strangers.
// Prints nanoseconds per lookup, three rounds each, so run-to-run spread shows (docs/performance.md).
//
//   npm run bench:segment
import { ProjectState } from "../packages/core/dist/src/index.js";

const LOOKUPS = 1_000_000;
const DISTINCT = 10_000;

function measure(members) {
  const state = new ProjectState();
  for (let i = 0; i < members; i++) state.addMember("seg", `member-${i}`);
  const queries = Array.from({ length: DISTINCT }, (_, i) =>
    i % 20 < 9 ? `actorIds=member-${(i * 7919) % members}` : `actorIds=stranger-${i}`,
  );
  const rounds = [];
  for (let round = 0; round < 3; round++) {
    let found = 0;
    const started = process.hrtime.bigint();
    for (let i = 0; i < LOOKUPS; i++) if (state.isMember("seg", queries[i % DISTINCT].slice(9))) found++;
    rounds.push(Number(process.hrtime.bigint() - started) / LOOKUPS);
    if (found !== (LOOKUPS / 20) * 9) throw new Error(`expected 45 % members, found ${found}`);
  }
  return rounds;
}

console.log("| segment members | ns per lookup, three rounds |");
console.log("|---:|---|");
for (const members of [1_000, 1_000_000]) {
  console.log(
    `| ${members.toLocaleString("en-US")} | ${measure(members)
      .map((ns) => ns.toFixed(0))
      .join(", ")} |`,
  );
}
