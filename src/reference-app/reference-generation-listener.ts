import { Inject, Injectable, Optional, type OnModuleInit } from '@nestjs/common';
import type { AdmissionService } from '../admission/admission-service';
import { ADMISSION_SERVICE } from '../admission/admission.constants';
import { InvocationLedger } from '../ledger/invocation-ledger';
import { AuditSink } from '../policy/audit-log/audit-sink';
import { RuntimePolicy } from '../policy/runtime-policy';
import { RunRegistry } from '../runner/runs/run-registry';
import { RuntimeServiceSupervisor } from '../services/bundle/runtime-service-supervisor';
import { TraceStore } from '../trace/trace-store';
import { referenceRunnerBuilder } from './reference-runners';

/**
 * Rebuilds the reference runners on every new bundle generation (spec 03 §13): a generation that
 * stopped on a fault leaves its runners stale, so new runs and resumes get runners of the new one.
 */
@Injectable()
export class ReferenceGenerationListener implements OnModuleInit {
  constructor(
    private readonly services: RuntimeServiceSupervisor,
    private readonly registry: RunRegistry,
    @Inject(ADMISSION_SERVICE) private readonly admission: AdmissionService,
    private readonly policy: RuntimePolicy,
    @Inject(AuditSink) private readonly auditSink: AuditSink,
    private readonly ledger: InvocationLedger,
    @Optional() @Inject(TraceStore) private readonly traceStore: TraceStore | null,
  ) {}

  onModuleInit(): void {
    const build = referenceRunnerBuilder({ admission: this.admission, policy: this.policy, auditSink: this.auditSink, ledger: this.ledger, traceStore: this.traceStore ?? null });
    let first = true;
    this.services.onGeneration((generation) => {
      // the registry was built on the first generation already
      if (first) {
        first = false;
        return;
      }
      this.registry.replaceRunners(build(generation.runnerSpec()));
    });
  }
}
