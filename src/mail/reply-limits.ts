// How much of a message found in an inbox is read, shared by the reader (reply-reading.ts) and its HTML walk
// (reply-html.ts), which the reader loads only when a message has HTML.

/** At most this much of a message is read: its headers and the start of its text. */
export const MAX_BYTES_PER_MESSAGE = 64 * 1024;
