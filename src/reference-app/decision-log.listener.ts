import { Injectable, Logger } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import type { AdmissionDecisionEvent } from '../admission/admission.types';
import { logField } from '../shared/text/log-escape';
import { TelemetryEvents } from '../telemetry/telemetry-events';

/**
 * Logs every admission decision (the payload is content-free by construction); `tenant=` only for a tenant
 * named in the admission configuration, the only tenant ids a decision carries.
 */
@Injectable()
export class DecisionLogListener {
  private readonly logger = new Logger('Admission');

  @OnEvent(TelemetryEvents.admissionDecision)
  onAdmission(event: AdmissionDecisionEvent): void {
    const tenant = event.tenant_id === undefined ? '' : ` tenant=${logField(event.tenant_id)}`;
    this.logger.log(`${event.outcome} agent=${logField(event.agent_id)}${tenant} wait_ms=${event.wait_ms} active=${event.active} queued=${event.queued}`);
  }
}
