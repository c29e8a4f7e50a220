export { canonicalJson } from './canonical-json';
export { deepFreeze, frozenJsonCopy, frozenJsonParse } from './json-copy';
export { hasEscapedNul } from './escaped-nul';
export { storableJsonText } from './storable-json';
export { measure, measureContent, type MeasureResult } from './measure';
export type { UnsupportedJsonKind } from './json-walker';
export { JsonError, type JsonErrorCode } from './json.errors';
export type { JsonObject, JsonValue } from './json.types';
