import { firstFailures, optionFailureDetails, type OptionReadFailure } from '../shared/options/option-reader';
import { EvalServiceError, type EvalServiceErrorCode } from './eval.errors';

/**
 * The error of a failed options read, ranked as spec 05 ranks them: every unknown key under
 * `unknownCode` (`{field}` or `{fields}`, sorted), else the first bad option in sorted order under
 * `invalidCode` (`{field}`; the reader's name when the whole value is unusable).
 */
export function evalOptionFailure(failure: OptionReadFailure, unknownCode: EvalServiceErrorCode, invalidCode: EvalServiceErrorCode = unknownCode): EvalServiceError {
  return new EvalServiceError(failure.unknown.length > 0 ? unknownCode : invalidCode, optionFailureDetails(firstFailures(failure)));
}
