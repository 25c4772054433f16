/** The resource catalogue: descriptions of every resource and of the two writes, as data. */
export * from './types.js';
export * from './resources.js';
export * from './lookup.js';
export * from './content.js';
export * from './report-state.js';
export * from './writes.js';
