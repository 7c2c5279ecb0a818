// A run page follows its run's realtime stream: `run_update` and `run_metric` frames make it
// read its live regions again (status, duration, tokens and cost, output, timeline), `run_log`
// frames go to the log (run-logs.js), and once the run ends the webhook deliveries are read
// again while they arrive.
import { coalesce, refreshRegions } from '../lib/regions.js';
import { openStream } from '../lib/stream.js';

const TERMINAL = new Set(['success', 'failed', 'timeout', 'cancelled']);
const SAID = {
  success: 'The run succeeded.',
  failed: 'The run failed.',
  timeout: 'The run timed out.',
  cancelled: 'The run was cancelled.',
  running: 'The run is running.',
};

export function connect(root) {
  const logs = document.getElementById('logs');
  const status = document.getElementById('run-live-status');
  let current = root.dataset.status;
  const refresh = coalesce(() => refreshRegions(['run-summary', 'output-body', 'timeline-body']), 1000);
  const deliveries = coalesce(() => refreshRegions(['deliveries-body']), 2000);
  let ended = TERMINAL.has(current);

  openStream(
    root.dataset.stream,
    {
      run_update(run) {
        if (run.status !== current) {
          current = run.status;
          root.dataset.status = current;
          if (status && SAID[current]) status.textContent = SAID[current];
        }
        refresh();
        if (TERMINAL.has(run.status) && !ended) {
          ended = true;
          // Deliveries follow the terminal event by a moment, retries by longer.
          for (const ms of [1500, 5000, 15000, 45000]) setTimeout(deliveries, ms);
        }
      },
      run_metric: refresh,
      run_log(entry) {
        logs?.dispatchEvent(new CustomEvent('run-log', { detail: entry }));
        if (!ended) refresh();
      },
    },
    { onOpen: () => logs?.dispatchEvent(new CustomEvent('run-stream-open')) },
  );
}
