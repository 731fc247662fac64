// A node:test reporter for scripts/test.ts: one line per top-level test, its file and how long it took, so that the
// next `npm test` can deal the files into groups of about equal length.
import path from 'node:path';

interface TestEvent {
  type: string;
  data: { nesting?: number; file?: string; details?: { duration_ms?: number } };
}

export default async function* durations(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  for await (const event of source) {
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0 && event.data.file) {
      yield `${path.relative(process.cwd(), event.data.file)}\t${event.data.details?.duration_ms ?? 0}\n`;
    }
  }
}
