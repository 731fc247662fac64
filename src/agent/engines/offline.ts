// The offline engine lives in src/agent/engines/offline/ (one file per concern); this path stays for its importers.
export { createOfflineEngine, OFFLINE_RULES_VERSION, offlineRules, wordCount } from './offline/index.ts';
