// Server-Sent Events read by hand from a fetch body (the HTML standard's "event stream interpretation"), so the
// client needs no EventSource: it can send its key in a header, and runs where EventSource does not exist.

export interface ServerSentEvent {
  /** The last `id:` seen on the stream, as a resumption point (Last-Event-ID). */
  id: string | null;
  event: string;
  data: string;
}

/** The events of a text/event-stream body, in order, until it ends. */
export async function* readEventStream(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let lastId: string | null = null;
  let event = '';
  let data: string[] = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (!done) buffer += decoder.decode(value, { stream: true });
      // Lines end with CRLF, LF or CR; a CR at the very end may be the first half of a CRLF not yet read, unless the
      // stream has ended.
      for (;;) {
        const match = (done ? /\r\n|\n|\r/ : /\r\n|\n|\r(?!$)/).exec(buffer);
        if (!match) break;
        const line = buffer.slice(0, match.index);
        buffer = buffer.slice(match.index + match[0].length);
        if (line === '') {
          if (data.length > 0) yield { id: lastId, event: event || 'message', data: data.join('\n') };
          event = '';
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue; // a comment: the server's heartbeat
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let text = colon < 0 ? '' : line.slice(colon + 1);
        if (text.startsWith(' ')) text = text.slice(1);
        if (field === 'data') data.push(text);
        else if (field === 'event') event = text;
        else if (field === 'id' && !text.includes('\0')) lastId = text;
      }
      if (done) return;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}
