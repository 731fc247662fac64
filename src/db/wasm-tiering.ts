// How long V8 runs a function of PGlite's WebAssembly in baseline code before it compiles it again with its optimizing
// compiler (src/db/database.ts says why). A flag of V8 for the whole process: bin/leadrun and `npm test` start Node with
// it, so that it never changes in the middle of a process: V8 keeps compiled code for one setting of its flags, and
// Node's compile cache (node_modules/.cache) would reject the code of every module compiled under the other setting.
export const WASM_TIERING_FLAG = '--wasm-tiering-budget=2000000000';
