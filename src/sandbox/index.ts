/**
 * The embedded sandbox: a stateful local implementation of the API in api-spec.md with
 * deterministic demo data, used by `carectl --sandbox`, `carectl sandbox` and the tests.
 */
export { startSandbox, type RecordedRequest, type Sandbox, type SandboxOptions } from './server.js';
export { FAULT_KINDS, type FaultKind, type FaultOptions } from './faults.js';
export { DEMO_PASSWORD, DEMO_USER, FIXTURES, HOSTILE, MICROBLOG_PLACEHOLDER_DATE, MICROBLOG_PLACEHOLDER_LINK } from './fixtures.js';
export { reportFileContent, reportState, type ReportState } from './reports.js';
export { parseBandwidth } from './link.js';
export { actionsOf, contentOf, notesOf } from './content.js';
export type * from './model.js';
export { CONVERSATION_STATUSES, PLATFORMS, PLATFORM_PREFIX, REPORT_FORMATS } from './model.js';
