import type { Clock } from '../../shared/time/clock';
import type { CheckedSave } from './artifact-request';
import { deepFreeze } from '../../json/json-copy';
import type { JsonObject } from '../../json/json.types';
import type { ArtifactRecord, ArtifactVersionInfo } from '../services.types';

/** The frozen metadata of one version, in the spec's key order. */
export function versionInfo(fields: ArtifactVersionInfo): ArtifactVersionInfo {
  return Object.freeze({
    version: fields.version,
    mime_type: fields.mime_type,
    size_bytes: fields.size_bytes,
    sha256: fields.sha256,
    custom_metadata: deepFreeze(fields.custom_metadata),
    created_at_ms: fields.created_at_ms,
  });
}

/** The frozen record of a load (spec 07 §1.2): the version's metadata and its bytes (which a typed array cannot freeze). */
export function artifactRecord(info: ArtifactVersionInfo, data: Uint8Array): ArtifactRecord {
  return Object.freeze({
    version: info.version,
    data,
    mime_type: info.mime_type,
    size_bytes: info.size_bytes,
    sha256: info.sha256,
    custom_metadata: info.custom_metadata,
    created_at_ms: info.created_at_ms,
  });
}

/** The record of version `version` of a checked save, created now. */
export function savedVersionInfo(save: CheckedSave, version: number, clock: Clock): ArtifactVersionInfo {
  return versionInfo({
    version,
    mime_type: save.mimeType,
    size_bytes: save.data.byteLength,
    sha256: save.sha256,
    custom_metadata: save.customMetadata,
    created_at_ms: Math.floor(clock.wallNow()),
  });
}
