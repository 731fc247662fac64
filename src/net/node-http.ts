// node:http, for the modules that call it, taken with `process.getBuiltinModule` rather than `import … from
// 'node:http'`. An import makes an ES module of the built-in by reading each of its exports, and reading node:http's
// WebSocket, CloseEvent and MessageEvent loads undici: about 35 ms of CPU at each start of `serve` and `worker`, which
// have no use for it until a run fetches something.
export const http = process.getBuiltinModule('node:http');
