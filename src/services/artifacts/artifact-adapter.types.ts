import type {
  AdapterCallOptions,
  ArtifactFileRequest,
  ArtifactRecord,
  ArtifactScope,
  ArtifactVersionInfo,
  PageRequest,
  SaveArtifactRequest,
  ServiceAdapter,
} from '../services.types';

/** A load: the latest version, or `version` (a safe integer ≥ 1). */
export type LoadArtifactRequest = ArtifactFileRequest & { readonly version?: number };

/** A delete: every version when `version` is omitted, else that one or the latest. */
export type DeleteArtifactRequest = ArtifactFileRequest & { readonly version?: number | 'latest' };

/** One page of filenames, in bytewise (UTF-8) order. */
export interface ArtifactKeyPage {
  readonly keys: readonly string[];
  readonly next_cursor: string | null;
  readonly has_more: boolean;
}

/** One page of version metadata, ascending. */
export interface ArtifactVersionPage {
  readonly versions: readonly ArtifactVersionInfo[];
  readonly next_cursor: string | null;
  readonly has_more: boolean;
}

/**
 * An artifact adapter as a scope worker calls it (spec 07 §1.2, §2): the `ArtifactService`
 * operations, each taking the call's signal and remaining time last (optional when the adapter is
 * used directly), plus the adapter's id, capabilities, optional per-scope start and close.
 */
export interface ArtifactAdapter extends ServiceAdapter {
  /** The new version: the last number ever given to `filename` in the scope + 1 (1 for a new file). */
  saveArtifact(request: SaveArtifactRequest, call?: AdapterCallOptions): Promise<number>;
  /** The latest version, or `version`; `undefined` when absent. */
  loadArtifact(request: LoadArtifactRequest, call?: AdapterCallOptions): Promise<ArtifactRecord | undefined>;
  /** Filenames with at least one version, bytewise; unpaged: all of them up to `legacyListLimit`. */
  listArtifactKeys(scope: ArtifactScope, page?: PageRequest, call?: AdapterCallOptions): Promise<ArtifactKeyPage>;
  /** Version metadata, ascending; unpaged: all of them up to `legacyListLimit`. */
  listVersions(request: ArtifactFileRequest, page?: PageRequest, call?: AdapterCallOptions): Promise<ArtifactVersionPage>;
  /** The number of versions deleted. */
  deleteArtifact(request: DeleteArtifactRequest, call?: AdapterCallOptions): Promise<number>;
}
