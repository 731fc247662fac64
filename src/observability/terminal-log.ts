// Log lines for a person at a terminal. A service's logger writes JSON lines, which is what a log collector wants
// and what `leadrun serve` writes when its output is not a terminal; a person who ran `npm start` gets each line
// rewritten here as short text: the time, the level when it is not info, the message and its fields, and a request
// as "GET /leads 200 6.7 ms". It reads the JSON that pino wrote (after redactSecrets), so it needs no dependency
// and sees exactly what a log collector would (pino-pretty would add a dozen packages for the same few lines).

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

/** Fields every line has, or that only a log collector needs: not repeated on a person's screen. */
const QUIET_FIELDS = new Set(['level', 'time', 'service', 'msg', 'pid', 'hostname', 'reqId', 'err']);

function clock(time: unknown): string {
  const date = typeof time === 'number' ? new Date(time) : new Date();
  return [date.getHours(), date.getMinutes(), date.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

function fieldText(value: unknown): string {
  return typeof value === 'string' && /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
}

/**
 * One JSON log line as a person reads it, or null for a line that says nothing a person needs (Fastify's
 * "Server listening at", which the ready line that `serve` prints right after says better). A line that is not
 * JSON is passed on as it is.
 */
export function terminalLine(json: string): string | null {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const msg = typeof entry.msg === 'string' ? entry.msg : '';
  if (msg.startsWith('Server listening at ')) return null;
  const level = typeof entry.level === 'number' ? entry.level : 30;
  const head = `${clock(entry.time)}${level === 30 ? '' : ` ${LEVELS[level] ?? level}`}`;
  if (msg === 'request' && typeof entry.method === 'string' && typeof entry.url === 'string') {
    return `${head} ${entry.method} ${entry.url} ${entry.status} ${entry.ms} ms\n`;
  }
  const fields = Object.entries(entry).filter(([name, value]) => !QUIET_FIELDS.has(name) && value !== undefined);
  const text = [head, msg, ...fields.map(([name, value]) => `${name}=${fieldText(value)}`)].filter(Boolean).join(' ');
  const err = entry.err as { stack?: unknown; message?: unknown } | undefined;
  const detail = typeof err?.stack === 'string' ? err.stack : typeof err?.message === 'string' ? err.message : null;
  return `${text}\n${detail ? `${detail.replace(/^/gm, '    ')}\n` : ''}`;
}

/** A destination for pino that writes each line as `terminalLine` makes it. */
export function terminalLog(out: { write(text: string): unknown }): { write(json: string): void } {
  return {
    write(json) {
      const line = terminalLine(json.endsWith('\n') ? json.slice(0, -1) : json);
      if (line !== null) out.write(line);
    },
  };
}

