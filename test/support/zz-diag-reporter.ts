import type { Reporter, TestModule } from 'vitest/node';
import { appendFileSync } from 'node:fs';
export default class Diag implements Reporter {
  onTestModuleEnd(m: TestModule): void {
    const d = m.diagnostic();
    appendFileSync(
      '/tmp/diag.tsv',
      `${m.moduleId.replace(/.*\/test\//, '')}\t${Math.round(d.collectDuration)}\t${Math.round(d.setupDuration)}\t${Math.round(d.duration)}\t${Math.round(d.prepareDuration)}\n`,
    );
  }
}
