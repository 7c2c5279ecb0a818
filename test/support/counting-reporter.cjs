'use strict';
// Mocha's spec output, closed by the plain line CI reads to know tests ran:
// "N passed, N failed, N skipped" (mocha's own "N passing" is not read by CI).
// CommonJS because mocha loads reporters with require().
const Mocha = require('mocha');

const { EVENT_RUN_END } = Mocha.Runner.constants;

class CountingSpec extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    // Registered after Spec's own epilogue listener, so this line comes last.
    runner.once(EVENT_RUN_END, () => {
      const { passes, failures, pending } = this.stats;
      process.stdout.write(`${passes} passed, ${failures} failed, ${pending} skipped\n`);
    });
  }
}

module.exports = CountingSpec;
