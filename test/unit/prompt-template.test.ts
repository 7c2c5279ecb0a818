// Prompts as logic-less Mustache templates (DESIGN.md 5): parse errors name the line, rendering
// escapes nothing, values render as plain Mustache renders them, and nothing stays cached.
import { expect } from 'chai';
import Mustache from 'mustache';
import { PromptTooLarge, type PromptView, promptNamesUsed, promptTemplateErrors, renderPrompt } from '../../shared/packages/prompt-template.ts';

const view = (extra: Partial<PromptView> = {}): PromptView => ({
  runId: 'run_1',
  input: {},
  memories: [],
  checkpoint: null,
  history: [],
  timeout: 300,
  uploads: [],
  platform: {},
  ...extra,
});

describe('prompt templates', () => {
  it('names the line and column of a template that does not parse', () => {
    const [unclosed] = promptTemplateErrors('# Brief\n\nFor {{input.topic}}:\n{{#input.items}}\n- {{.}}\n', 'prompt.md');
    expect(unclosed).to.include({ field: 'prompt.md', code: 'invalid_template', line: 4, column: 1 });
    expect(unclosed.message).to.equal('prompt.md is not a valid Mustache template: line 4, column 1: Unclosed section "input.items"');
    const [unopened] = promptTemplateErrors('a\nb {{/done}}', 'prompt');
    expect(unopened).to.include({ field: 'prompt', line: 2, column: 3 });
    expect(unopened.message).to.match(/Unopened section "done"$/);
    const [tag] = promptTemplateErrors('x\n\n{{runId', 'prompt.md');
    expect(tag).to.include({ line: 3 });
    expect(tag.message).to.match(/Unclosed tag$/);
    expect(promptTemplateErrors('plain text, {{runId}} and {{#memories}}{{content}}{{/memories}}', 'prompt.md')).to.deep.equal([]);
  });

  it('renders with HTML escaping off and values as plain Mustache writes them', () => {
    const out = renderPrompt(
      '{{input.topic}} | {{{input.topic}}} | {{runId}} | {{input.n}} | {{input}} | {{checkpoint}} | {{missing}}|',
      view({
        input: { topic: 'R&D <"quotes"> \'x\'', n: 42 },
        checkpoint: ['one', 'two'],
      }),
    );
    expect(out).to.equal('R&D <"quotes"> \'x\' | R&D <"quotes"> \'x\' | run_1 | 42 | [object Object] | one,two | |');
  });

  it('renders what the input holds as text: a value is never a template', () => {
    expect(renderPrompt('[{{input.topic}}]', view({ input: { topic: '{{runId}} {{#memories}}x{{/memories}}' } }))).to.equal(
      '[{{runId}} {{#memories}}x{{/memories}}]',
    );
  });

  it('stops a render that would blow up (nested sections over the view lists)', () => {
    const history = Array.from({ length: 10 }, (_, i) => ({ runId: `run_${i}`, timestamp: i, output: { summary: 'x'.repeat(100) } }));
    const nested = `${'{{#history}}'.repeat(6)}{{output.summary}}${'{{/history}}'.repeat(6)}`;
    const started = Date.now();
    expect(() => renderPrompt(nested, view({ history }))).to.throw(PromptTooLarge, /renders more than/);
    expect(Date.now() - started).to.be.below(5000);
    // two levels are fine
    expect(renderPrompt('{{#history}}{{#history}}.{{/history}}{{/history}}', view({ history }))).to.have.length(100);
  });

  it('walks sections of the view', () => {
    const template =
      '{{#memories}}- {{content}} ({{createdAt}})\n{{/memories}}{{^history}}first run{{/history}}{{#checkpoint}}[{{.}}]{{/checkpoint}}{{#uploads}}{{name}} ' +
      'at {{path}}{{/uploads}}';
    const out = renderPrompt(
      template,
      view({
        memories: [{ content: 'likes tea', createdAt: 1700000000000 }],
        checkpoint: ['a', 'b'],
        uploads: [{ name: 'n.txt', path: '/workspace/input/doc/n.txt', size: 3, type: 'text/plain' }],
      }),
    );
    expect(out).to.equal('- likes tea (1700000000000)\nfirst run[a][b]n.txt at /workspace/input/doc/n.txt');
  });

  it('lists the names a template reads, inside sections too', () => {
    expect([
      ...promptNamesUsed('{{input.topic}} {{#memories}}{{content}} {{history.0}}{{/memories}} {{^checkpoint}}x{{/checkpoint}} {{{runId}}} {{> partial}}'),
    ]).to.have.members(['input', 'memories', 'content', 'history', 'checkpoint', 'runId']);
  });

  it("leaves mustache's shared writer alone (no global escape change, no cached template)", () => {
    const before = Mustache.escape;
    const template = `unique ${Math.random()} {{input.x}}`;
    renderPrompt(template, view({ input: { x: '<b>' } }));
    promptTemplateErrors(template, 'prompt.md');
    expect(Mustache.escape).to.equal(before);
    expect(Mustache.render('{{x}}', { x: '<b>' })).to.equal('&lt;b&gt;');
    expect((Mustache.templateCache as unknown as { _cache: Record<string, unknown> })._cache).not.to.have.any.keys(`${template}:{{:}}`);
  });
});
