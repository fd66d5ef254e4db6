#!/usr/bin/env node
// Stops at once, with the command that fixes it, when this Node.js is older than the project needs (the root
// package.json's `engines`). The root `preinstall` script runs it: npm runs that after fetching the packages
// but before any of them runs a script or is loaded, so on Node.js 20 `npm install` ends here instead of in a
// crash (better-sqlite3 13 is built for Node.js 22 and later, and aborts the process on 20). `npm start`
// (scripts/start.mjs) and `npm test` (scripts/test.mjs) import it first for the same reason.
// Written for any Node.js: no syntax or module newer than Node.js 12 here.
import { readFileSync } from "node:fs";

const range = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).engines.node;
const minimum = /^>=(\d+)\.(\d+)$/.exec(range);
if (minimum === null) throw new Error(`scripts/check-node.mjs reads engines.node as ">=MAJOR.MINOR", not ${range}`);
const [major, minor] = process.versions.node.split(".").map(Number);
const [needMajor, needMinor] = [Number(minimum[1]), Number(minimum[2])];
if (major < needMajor || (major === needMajor && minor < needMinor)) {
  process.stderr.write(
    [
      "",
      `Flagstaff needs Node.js ${needMajor}.${needMinor} or newer (the LTS lines 22 and 24); this is Node.js ${process.version}.`,
      "Install Node.js 24 into ~/.cache/flagstaff/node/24 (from the npm registry, no root needed) and put it first",
      "on this shell's PATH, then run the command again:",
      "",
      '  export PATH="$(bash scripts/install-node.sh 24)/bin:$PATH"',
      "",
      "(Or install Node.js 24 from https://nodejs.org or with your version manager, e.g. `nvm install 24`.)",
      "",
      "",
    ].join("\n"),
  );
  process.exit(1);
}
