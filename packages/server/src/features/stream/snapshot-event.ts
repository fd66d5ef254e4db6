/** Elements of an array serialized in one go, so a slice's cost is one `JSON.stringify` of a few KiB. */
const SLICE = 1024;
/** About how many characters one written chunk holds: enough to keep the socket busy, small to hold. */
const CHUNK_CHARS = 64 * 1024;

/**
 * `JSON.stringify(value)`, in pieces: objects key by key and arrays in slices, so that a state of a
 * million segment members is serialized a slice at a time as the socket takes it, never as one string.
 * For the plain data it is given (objects, arrays, strings, numbers, booleans, null) the pieces joined are
 * exactly `JSON.stringify(value)`: the same key order (`Object.entries` follows the same own-key order) and
 * the same escaping (each leaf and slice goes through `JSON.stringify`).
 */
function* jsonPieces(value: unknown): Generator<string> {
  if (Array.isArray(value)) {
    yield "[";
    for (let start = 0; start < value.length; start += SLICE) {
      const slice = value.slice(start, start + SLICE);
      if (start > 0) yield ",";
      if (slice.every((item) => item === null || typeof item !== "object")) {
        yield JSON.stringify(slice).slice(1, -1);
      } else {
        for (let i = 0; i < slice.length; i++) {
          if (i > 0) yield ",";
          yield* jsonPieces(slice[i]);
        }
      }
    }
    yield "]";
    return;
  }
  if (value !== null && typeof value === "object") {
    yield "{";
    let first = true;
    for (const [key, member] of Object.entries(value)) {
      if (member === undefined) continue;
      yield `${first ? "" : ","}${JSON.stringify(key)}:`;
      first = false;
      yield* jsonPieces(member);
    }
    yield "}";
    return;
  }
  yield JSON.stringify(value);
}

/** Joins small pieces into chunks of about CHUNK_CHARS, so a write is neither tiny nor huge. */
function* coalesce(pieces: Iterable<string>): Generator<string> {
  let buffered: string[] = [];
  let length = 0;
  for (const piece of pieces) {
    buffered.push(piece);
    length += piece.length;
    if (length >= CHUNK_CHARS) {
      yield buffered.join("");
      buffered = [];
      length = 0;
    }
  }
  if (length > 0) yield buffered.join("");
}

/**
 * A server-sent event whose data is `JSON.stringify(data)`, as chunks to write one after another: the same
 * bytes as `id: …\nevent: …\ndata: <JSON>\n\n` written in one go, produced only as fast as they are taken.
 */
export function eventChunks(id: number, event: string, data: unknown): Generator<string> {
  return coalesce(
    (function* () {
      yield `id: ${id}\nevent: ${event}\ndata: `;
      yield* jsonPieces(data);
      yield "\n\n";
    })(),
  );
}
