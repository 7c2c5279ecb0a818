// The sink protocol of remote runs, written once and published in OpenAPI on the three routes
// that speak it (launch, report, extend).
import { MAX_SINK_EVENTS, SINK_TTL } from '../../shared/runs/sink.ts';

export const SINK_PROTOCOL = `**Remote runs and their sink.** A remote run executes outside the service (a developer's \
machine, a CI job) and reports through its sink:

1. \`GET /api/agents/{scope}/{name}/bundle\` gives the runner what it needs: manifest, prompt, resolved skills and the input and output schemas.
2. \`POST /api/runs/remote\` creates the run (\`pending\`; it counts against the organization's run rate and concurrency \
limits like any run) and answers the sink once: \`sink.url\`, \`sink.secret\` (\`sink_...\`, shown only in this answer) \
and \`sink.expiresAt\` (now + \`sinkTtlSeconds\`, default ${SINK_TTL.default}, ${SINK_TTL.min} to ${SINK_TTL.max}).
3. The runner sends \`Authorization: Bearer <sink secret>\` to \`POST /api/runs/{id}/sink\` with \`{events: [...]}\` (1 \
to ${MAX_SINK_EVENTS}, applied in order): \`{type: 'started'}\`; \`{type: 'log', level, message, data?}\` (a \`run_log\` \
entry of kind \`runner\`); \`{type: 'metric', usage: {inputTokens, outputTokens, costUsd}}\` (running totals, replacing \
the previous ones); and last, one final report: \`{type: 'result', output}\` (validated against the agent's output schema: \
a mismatch ends the run \`failed\` with the errors) or \`{type: 'failure', error}\`. The first report moves the run to \`running\` \
(\`run.started\`); the answer carries the run's status after the batch (\`success\` or \`failed\` after a final report).
4. \`PATCH /api/runs/{id}/sink/extend\` \`{seconds?}\` pushes the expiry back to now + seconds (default ${SINK_TTL.default}; \
never earlier than it was). Once the expiry has passed, the sink answers 410 \`sink_expired\` and extending is refused too. \
A sink that expires without a final report ends the run \`failed\` ("the remote runner stopped reporting"); the run's timeout \
(manifest \`timeout\` clamped to \`timeout_ceiling_seconds\`, counted from creation) ends it \`timeout\` whatever the sink. \
Cancelling the run (\`POST /api/runs/{id}/cancel\`) ends it \`cancelled\`.
5. Once the run has ended, the sink answers 409 \`run_finished\` (410 \`sink_expired\` when it ended by expiry): the \
runner should stop. A wrong secret is 401. Sink routes are limited per run (SPEC 8.1 run-bound routes).`;
