import type { INestApplication } from '@nestjs/common';
import { useJsonBodyLimits } from '../shared/json-depth-limit';

/** What the reference service sets up on its app before it listens: the JSON body size and depth limits. */
export function setUpReferenceApp(app: INestApplication): void {
  useJsonBodyLimits(app);
}
