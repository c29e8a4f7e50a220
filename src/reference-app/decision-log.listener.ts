import { Injectable, Logger } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import type { AdmissionDecisionEvent } from '../admission/admission.types';
import { logField } from '../shared/text/log-escape';
import { TelemetryEvents } from '../telemetry/telemetry-events';

/** Logs every admission decision (the payload is content-free by construction). */
@Injectable()
export class DecisionLogListener {
  private readonly logger = new Logger('Admission');

  @OnEvent(TelemetryEvents.admissionDecision)
  onAdmission(event: AdmissionDecisionEvent): void {
    this.logger.log(`${event.outcome} agent=${logField(event.agent_id)} wait_ms=${event.wait_ms} active=${event.active} queued=${event.queued}`);
  }
}
