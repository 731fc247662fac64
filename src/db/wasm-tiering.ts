// How long V8 runs a function of PGlite's WebAssembly in baseline code before it compiles it again with its optimizing
// compiler (docs/PERFORMANCE.md, change 23; src/db/database.ts says why). A flag of V8 for the whole process:
// bin/leadrun and `npm test` start Node with it, so that it never changes in the middle of a process. V8 keeps compiled
// code for one setting of its flags, and Node's compile cache (node_modules/.cache) rejected the code of 158 modules at
// each start of an embedded server after one on PostgreSQL, when only the embedded server set it, on opening its
// database.
export const WASM_TIERING_FLAG = '--wasm-tiering-budget=2000000000';
