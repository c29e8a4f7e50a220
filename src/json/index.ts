export { canonicalJson } from './canonical-json';
export { measure, measureContent, type MeasureResult } from './measure';
export type { UnsupportedJsonKind } from './json-walker';
export { JsonError, type JsonErrorCode } from './json.errors';
