// `connect.login.success_criteria[].condition` (DESIGN.md 7): a small grammar, parsed, never
// evaluated as code. Every condition must hold; with none, only a 2xx status counts.
//   $statusCode <op> <int>          op: == != < <= > >=
//   $statusCode in [<int>, ...]
//   $header.<name> exists
//   $cookie.<name> exists
//   $body contains "<text>"

export type Condition =
  | { kind: 'status'; op: '==' | '!=' | '<' | '<=' | '>' | '>='; value: number }
  | { kind: 'status_in'; values: number[] }
  | { kind: 'header'; name: string }
  | { kind: 'cookie'; name: string }
  | { kind: 'body'; text: string };

export interface LoginAnswer {
  status: number;
  /** Header names lower-cased. */
  headers: Record<string, string | string[] | undefined>;
  cookies: Record<string, string>;
  body: string;
}

const STATUS = /^\$statusCode\s*(==|!=|<=|>=|<|>)\s*(\d{3})$/;
const STATUS_IN = /^\$statusCode\s+in\s+\[\s*(\d{3}(?:\s*,\s*\d{3})*)\s*\]$/;
const HEADER = /^\$header\.([A-Za-z0-9!#$%&'*+.^_`|~-]+)\s+exists$/;
const COOKIE = /^\$cookie\.([A-Za-z0-9!#$%&'*+.^_`|~-]+)\s+exists$/;
const BODY = /^\$body\s+contains\s+"((?:[^"\\]|\\.)*)"$/;

/** The parsed condition, or undefined when it is not in the grammar. */
export function parseCondition(raw: string): Condition | undefined {
  const s = raw.trim();
  let m = STATUS.exec(s);
  if (m) return { kind: 'status', op: m[1] as never, value: Number(m[2]) };
  m = STATUS_IN.exec(s);
  if (m) return { kind: 'status_in', values: m[1].split(',').map((v) => Number(v.trim())) };
  m = HEADER.exec(s);
  if (m) return { kind: 'header', name: m[1].toLowerCase() };
  m = COOKIE.exec(s);
  if (m) return { kind: 'cookie', name: m[1] };
  m = BODY.exec(s);
  if (m) return { kind: 'body', text: m[1].replace(/\\(.)/g, '$1') };
  return undefined;
}

function holds(c: Condition, a: LoginAnswer): boolean {
  switch (c.kind) {
    case 'status':
      return {
        '==': a.status === c.value,
        '!=': a.status !== c.value,
        '<': a.status < c.value,
        '<=': a.status <= c.value,
        '>': a.status > c.value,
        '>=': a.status >= c.value,
      }[c.op];
    case 'status_in':
      return c.values.includes(a.status);
    case 'header':
      return a.headers[c.name] !== undefined;
    case 'cookie':
      return c.name in a.cookies;
    case 'body':
      return a.body.includes(c.text);
  }
}

/** The first condition that does not hold (its text), or undefined when the login succeeded. */
export function failedCriterion(conditions: Array<{ condition: string }> | undefined, answer: LoginAnswer): string | undefined {
  if (!conditions?.length) return answer.status >= 200 && answer.status < 300 ? undefined : '2xx status';
  for (const { condition } of conditions) {
    const parsed = parseCondition(condition);
    if (!parsed || !holds(parsed, answer)) return condition;
  }
  return undefined;
}
