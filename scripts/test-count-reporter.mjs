// A node --test reporter that scripts/test.mjs adds beside `spec`: it counts, for each test file, the tests
// its process announced (test:enqueue), the results it reported (test:pass and test:fail, skips and todos
// among them) and whether its run reached the end (its own test:summary, the last event a file's process
// writes) with the file's duration, and writes them as one JSON object when the run ends. A file whose process ended before all of
// its results were written (a process.exit in a test or in code under test, a crash that exits 0) shows no
// summary or fewer results than tests: node --test itself passes such a file with the results that arrived.
import { isAbsolute, relative, resolve } from "node:path";

export default async function* countTests(source) {
  const files = {};
  const entry = (file) => {
    files[file] ??= { enqueued: 0, reported: 0, summary: undefined, durationMs: undefined };
    return files[file];
  };
  for await (const event of source) {
    const { file, name } = event.data ?? {};
    if (typeof file !== "string") continue;
    const path = relative(process.cwd(), isAbsolute(file) ? file : resolve(file));
    // The runner's own entry for a file (named after the file) is not one of the file's tests.
    const isFileItself = name === file || name === path;
    if (event.type === "test:enqueue" && !isFileItself) entry(path).enqueued += 1;
    else if ((event.type === "test:pass" || event.type === "test:fail") && !isFileItself) entry(path).reported += 1;
    else if (event.type === "test:summary") {
      entry(path).summary = event.data.counts.tests;
      entry(path).durationMs = event.data.duration_ms;
    } else if (event.type === "test:enqueue") entry(path);
  }
  yield `${JSON.stringify(files)}\n`;
}
