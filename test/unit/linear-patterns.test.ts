// Tenant patterns on the linear-time engine (shared/linear-regexp.ts): the ECMAScript meaning
// kept, what RE2 cannot run refused with the reason and the place in the schema
// (shared/schema-patterns.ts), the work budget, and the `url` format (shared/url-format.ts)
// deciding the same language as ajv-formats' expression.
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { expect } from 'chai';
import { compileLinear, PatternBudgetExceeded, UnusablePattern, withPatternBudget } from '../../shared/linear-regexp.ts';
import { schemaPatternErrors } from '../../shared/schema-patterns.ts';
import { isUrl } from '../../shared/url-format.ts';
import { toFieldErrors, userSchemaValidator } from '../../shared/validation.ts';

/** Deterministic pseudo-random numbers (a failure replays). */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
}

function refusal(pattern: string): UnusablePattern {
  try {
    compileLinear(pattern);
  } catch (err) {
    if (err instanceof UnusablePattern) return err;
    throw err;
  }
  throw new Error(`${pattern} was accepted`);
}

describe('tenant patterns on the linear-time engine', () => {
  it('keeps the ECMAScript (`u` flag) meaning where RE2 differs: \\s, \\S, `.`, classes, escapes, surrogates', () => {
    const cases: Array<[string, string[]]> = [
      ['^\\S+$', ['a\u00a0b', 'ab', 'a b', 'a\u2028b', 'a\ufeffb', 'a\u3000b']],
      ['^\\s$', ['\u000b', '\u00a0', '\u2003', '\u0085', 'x']],
      ['^.+$', ['a\rb', 'a\nb', 'ab', 'a\u2028b', 'a\u0085b']],
      ['^[\\s\\d]+$', ['1 2\u00a0', '1a']],
      ['^[^\\S]+$', [' \u00a0', 'a']],
      ['[[:alpha:]', ['[', 'a', 'x', ':']],
      ['^(?<y>\\d{4})-\\d{2}$', ['2020-01', '20-01']],
      ['^\\u00e9\\u{1F600}$', ['é😀', 'e😀']],
      ['^\\uD83D\\uDE00$', ['😀', '\uD83D']],
      ['^[😀-😂]$', ['😁', 'a']],
      ['^\\p{L}+$', ['héllo', 'h1']],
      ['^\\p{Letter}+$', ['héllo', 'h1']],
      ['^\\p{Script=Greek}+$', ['αβγ', 'abc']],
      ['^[^]$', ['\n', 'a', '']],
      ['^[]$', ['', 'a']],
      ['\\cJ', ['\n', 'J']],
      ['^[\\b]$', ['\b', 'b']],
      ['\\bfoo\\b', ['a foo b', 'afoob']],
      ['^\\0$', ['\0', '0']],
      ['^[\\-a]+$', ['-a', 'b']],
      ['^\\w+\\W\\d\\D$', ['ab-1x', 'ab-12']],
      ['^https?://[^/]+/x$', ['https://a/x', 'http://b/y']],
      ['', ['', 'a']],
      ['a|b|', ['c']],
    ];
    for (const [pattern, inputs] of cases) {
      const linear = compileLinear(pattern);
      const v8 = new RegExp(pattern, 'u');
      for (const s of inputs) expect(linear.test(s), `${pattern} on ${JSON.stringify(s)}`).to.equal(v8.test(s));
    }
  });

  it("matches the issue's pattern against hostile input at once (V8 takes minutes)", () => {
    const evil = compileLinear('^(a+)+$');
    expect(evil.test(`${'a'.repeat(31)}!`)).to.equal(false);
    expect(evil.test(`${'a'.repeat(200_000)}!`)).to.equal(false);
    expect(evil.test('a'.repeat(200_000))).to.equal(true);
  });

  it('refuses what the engine cannot run, saying why', () => {
    expect(refusal('(a)\\1').reason).to.match(/backreference \(\\1\) needs backtracking/);
    expect(refusal('(?<n>a)\\k<n>').reason).to.match(/backreference/);
    expect(refusal('x(?=a)').reason).to.match(/lookahead/);
    expect(refusal('x(?!a)').reason).to.match(/lookahead/);
    expect(refusal('(?<=a)b').reason).to.match(/lookbehind/);
    expect(refusal('(?<!a)b').reason).to.match(/lookbehind/);
    expect(refusal('(?i:a)').reason).to.match(/inline modifiers/);
    expect(refusal('a{1000}'.repeat(11)).reason).to.match(/too large/);
    expect(refusal('a{1001}').reason).to.match(/invalid repeat count/);
    expect(refusal('\\p{sc=Grek}').reason).to.match(/cannot express/);
    expect(refusal('(').kind).to.equal('syntax');
    // A backslash escaped is no backreference; a class holding `(?=` is no lookahead.
    expect(compileLinear('\\\\1[(?=]').test('\\1=')).to.equal(true);
  });

  it('names each refused pattern where it is in the schema, never inside data keywords', () => {
    const schema = {
      type: 'object',
      properties: {
        default: { type: 'string', pattern: '(a)\\1' }, // a property named like a keyword
        x: { default: { pattern: '(a)\\1' }, examples: [{ pattern: '(?=x)' }], enum: [{ pattern: '(?=x)' }], pattern: '^ok$' },
        list: { type: 'array', items: [{ pattern: '(?<=a)' }] },
      },
      patternProperties: { '(?=x)': {} },
      $defs: { d: { propertyNames: { pattern: '(' } } },
    };
    const errors = schemaPatternErrors(schema, 'manifest.input.schema');
    expect(errors.map((e) => [e.field, e.code])).to.have.deep.members([
      ['manifest.input.schema.patternProperties.(?=x)', 'unsupported_pattern'],
      ['manifest.input.schema.properties.default.pattern', 'unsupported_pattern'],
      ['manifest.input.schema.properties.list.items.0.pattern', 'unsupported_pattern'],
      ['manifest.input.schema.$defs.d.propertyNames.pattern', 'invalid_schema'],
    ]);
    for (const e of errors) expect(e.message.startsWith(e.field)).to.equal(true);
  });

  it('refuses patterns too large to compile together, though each alone would do', () => {
    const properties = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`p${i}`, { type: 'string', pattern: `${'a{1000}'.repeat(9)}${i}` }]));
    const errors = schemaPatternErrors({ type: 'object', properties }, 'schema');
    expect(errors).to.have.length(1);
    expect(errors[0]).to.include({ field: 'schema.properties.p2.pattern', code: 'unsupported_pattern' });
    expect(errors[0].message).to.match(/too large together/);
  });

  it('meters the work of one validation and releases it after', () => {
    const big = compileLinear('a[ab]{999}c');
    const input = 'ab'.repeat(5_000);
    expect(() => withPatternBudget(() => big.test(input))).to.throw(PatternBudgetExceeded);
    expect(withPatternBudget(() => big.test(`a${'b'.repeat(999)}c`))).to.equal(true);
    // Each validation has its own budget.
    for (let i = 0; i < 3; i++) expect(withPatternBudget(() => big.test('ab'.repeat(1000)))).to.equal(false);
  });

  it('answers a too costly input with a too_costly error naming where the string is', () => {
    const validate = userSchemaValidator({ type: 'object', properties: { notes: { type: 'array', items: { type: 'string', pattern: 'a[ab]{999}c' } } } });
    const fine = `a${'b'.repeat(999)}c`;
    expect(validate({ notes: [fine, fine] })).to.equal(true);
    expect(validate({ notes: [fine, 'ab'.repeat(10_000)] })).to.equal(false);
    const [error] = toFieldErrors(validate.errors ?? []);
    expect(error).to.include({ field: 'notes.1', code: 'too_costly' });
    expect(error.message).to.match(/^notes\.1 is too long to check against the schema's patterns/);
  });

  describe('the `url` format', () => {
    const ajvFormatsUrl = fullFormats.url as RegExp;

    it('decides what ajv-formats decides', () => {
      const corpus = [
        'http://example.com',
        'https://a.b.co/x y',
        'http://10.0.0.1/',
        'http://10.0.0.1.example.com/',
        'http://172.16.0.1',
        'http://172.32.0.1',
        'http://user:pw@example.com:8080/p?q#f',
        'ftp://x@y@example.org/@a',
        'http://a@b@c.de',
        'http://@example.com',
        'http://@@example.com',
        'http://localhost',
        'http://1.2.3.4',
        'http://1.2.3.255',
        'HTTP://EXAMPLE.COM',
        'http://ex_ample.com',
        'http://exa-mple.com',
        'http://ex..com',
        'http://example.com:1',
        'http://example.com:123456',
        'http://例子.测试',
        'http://example.com/\u00a0',
        'mailto:x@example.com',
      ];
      for (const s of corpus) expect(isUrl(s), s).to.equal(ajvFormatsUrl.test(s));
      const next = random(28);
      const alphabet = ['a', 'b', 'z', '1', '0', '2', '5', '7', '.', ':', '/', '@', '-', ' ', '_', 'é', 'Q', '?', '#'];
      const prefixes = ['http://', 'https://', 'ftp://', 'http:/', 'HTTP://', 'http://a@', 'http://10.', 'http://172.1', 'http://192.168.'];
      for (let n = 0; n < 20_000; n++) {
        let s = prefixes[Math.floor(next() * prefixes.length)];
        const len = Math.floor(next() * 14);
        for (let i = 0; i < len; i++) s += alphabet[Math.floor(next() * alphabet.length)];
        expect(isUrl(s), s).to.equal(ajvFormatsUrl.test(s));
      }
    });

    it('takes linear time where ajv-formats takes quadratic', () => {
      expect(isUrl(`http://${':'.repeat(1_000_000)}!`)).to.equal(false);
      expect(isUrl(`http://${'a@'.repeat(500_000)}example.com`)).to.equal(true);
      expect(isUrl(`http://${'a@a.b/'.repeat(100_000)}`)).to.equal(false); // every `@` a host to try
    });
  });
});
