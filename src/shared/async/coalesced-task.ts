/**
 * Runs `work` when triggered, one run at a time: triggers that arrive while it runs ask for exactly
 * one more run after it (whatever they wanted is then seen by that run). A failing run is swallowed;
 * the next trigger runs again. `track` receives every run's promise (for a stop to await them).
 */
export class CoalescedTask {
  private running = false;
  private again = false;

  constructor(
    private readonly work: () => Promise<void>,
    private readonly track: (run: Promise<void>) => void = () => undefined,
  ) {}

  trigger(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    this.track(this.loop());
  }

  private async loop(): Promise<void> {
    try {
      do {
        this.again = false;
        await this.work().catch(() => undefined);
      } while (this.again);
    } finally {
      this.running = false;
    }
  }
}
