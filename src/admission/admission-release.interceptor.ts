import { CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor } from '@nestjs/common';
import { finalize, type Observable } from 'rxjs';
import type { AdmissionService } from './admission-service';
import { ADMISSION_SERVICE } from './admission.constants';
import { releaseOnce } from './admission-release';
import { admissionStateOf } from './admission.constants';

/**
 * Releases the request's permit when the handler's observable completes, errors or is unsubscribed:
 * never while the handler still runs, even if the client has gone. A handler returning a stream is
 * admitted for producing the value, not for its transfer.
 */
@Injectable()
export class AdmissionReleaseInterceptor implements NestInterceptor {
  constructor(@Inject(ADMISSION_SERVICE) private readonly controller: AdmissionService) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const state = context.getType() === 'http' ? admissionStateOf(context.switchToHttp().getRequest<object>()) : undefined;
    if (!state || state.interceptorAttached) return next.handle();
    state.interceptorAttached = true;
    return next.handle().pipe(finalize(() => releaseOnce(this.controller, state)));
  }
}
