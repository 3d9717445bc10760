/**
 * RFC 3339 times as Kubernetes' Go types decode and encode them: `metav1.Time` parses with Go's
 * `time.Parse(time.RFC3339, s)` and writes `t.UTC().Format(time.RFC3339)` (second precision);
 * `metav1.MicroTime` parses with `time.Parse("2006-01-02T15:04:05.000000Z07:00", s)` (exactly six
 * fractional digits required) and writes the same layout in UTC (apimachinery
 * pkg/apis/meta/v1/time.go and micro_time.go). A value of Go's zero time is written as `null`.
 *
 * Guarantees: acceptance and the error texts follow Go's `time.parse` (src/time/format.go) for
 * these two layouts: `parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"`,
 * `parsing time "…": month out of range`, `…: day out of range`, `…: extra text: "…"`; an
 * input fraction on a metav1.Time (`.`/`,` and any number of digits) is accepted and dropped, as
 * Go accepts a fraction the layout does not name; offsets are applied, so
 * `2024-05-01T10:00:00+02:00` becomes `2024-05-01T08:00:00Z`.
 * Caveats: years are 4-digit (0000–9999) as both layouts require; a time before year 1 after its
 * offset is applied is written with JavaScript's year rendering, not Go's.
 */

export type GoTimeLayout = 'Time' | 'MicroTime';

const LAYOUT_TEXT: Record<GoTimeLayout, string> = {
  Time: '2006-01-02T15:04:05Z07:00',
  MicroTime: '2006-01-02T15:04:05.000000Z07:00',
};

type LayoutElement = 'year' | 'month' | 'day' | 'hour' | 'minute' | 'second' | 'fraction6' | 'zone';

interface LayoutChunk {
  prefix: string;
  element: LayoutElement;
  text: string;
}

const DATE_AND_CLOCK: LayoutChunk[] = [
  { prefix: '', element: 'year', text: '2006' },
  { prefix: '-', element: 'month', text: '01' },
  { prefix: '-', element: 'day', text: '02' },
  { prefix: 'T', element: 'hour', text: '15' },
  { prefix: ':', element: 'minute', text: '04' },
  { prefix: ':', element: 'second', text: '05' },
];
const ZONE: LayoutChunk = { prefix: '', element: 'zone', text: 'Z07:00' };
const CHUNKS: Record<GoTimeLayout, LayoutChunk[]> = {
  Time: [...DATE_AND_CLOCK, ZONE],
  MicroTime: [...DATE_AND_CLOCK, { prefix: '', element: 'fraction6', text: '.000000' }, ZONE],
};

/** An instant: whole seconds since the Unix epoch and the nanoseconds within that second. */
export interface GoTime {
  unixSeconds: number;
  nanos: number;
}

/** Go's *time.ParseError, with its Error() text as message. */
export class GoTimeParseError extends Error {}

/** Go's time.quote: `"` and `\` escaped, bytes outside printable ASCII as `\xHH`. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const code = ch.codePointAt(0) ?? 0;
    if (code < 0x20 || code >= 0x80) {
      for (const b of Buffer.from(ch, 'utf8')) out += `\\x${b.toString(16).padStart(2, '0')}`;
    } else out += ch === '"' || ch === '\\' ? `\\${ch}` : ch;
  }
  return `${out}"`;
}

function isDigit(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  return c >= 48 && c <= 57;
}

/** Go's getnum: one or two digits (exactly two when `fixed`). */
function getnum(s: string, fixed: boolean): { n: number; rest: string } | undefined {
  if (!isDigit(s, 0)) return undefined;
  if (!isDigit(s, 1)) return fixed ? undefined : { n: s.charCodeAt(0) - 48, rest: s.slice(1) };
  return { n: (s.charCodeAt(0) - 48) * 10 + (s.charCodeAt(1) - 48), rest: s.slice(2) };
}

/** Go's time.atoi: an optional sign, then only digits (the empty string is 0). */
function atoi(s: string): number | undefined {
  const m = /^([+-]?)(\d*)$/.exec(s);
  if (!m) return undefined;
  const n = m[2] === '' ? 0 : Number(m[2]);
  return m[1] === '-' ? -n : n;
}

/** Go's parseNanoseconds over `value[0:nbytes]` (a `.`/`,` and digits). */
function parseNanoseconds(value: string, nbytes: number): { nanos: number; rangeError?: string } | undefined {
  if (value[0] !== '.' && value[0] !== ',') return undefined;
  const digits = Math.min(nbytes, 10);
  const n = atoi(value.slice(1, digits));
  if (n === undefined) return undefined;
  if (n < 0) return { nanos: 0, rangeError: 'fractional second' };
  return { nanos: n * 10 ** (10 - digits) };
}

function daysIn(month: number, year: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** `time.Parse(layout, value)` of Go for the metav1.Time or metav1.MicroTime layout. */
export function parseGoTime(value: string, layout: GoTimeLayout): GoTime {
  const layoutText = LAYOUT_TEXT[layout];
  const cannotParse = (valueElem: string, layoutElem: string) =>
    new GoTimeParseError(`parsing time ${goQuote(value)} as ${goQuote(layoutText)}: cannot parse ${goQuote(valueElem)} as ${goQuote(layoutElem)}`);
  const withMessage = (message: string) => new GoTimeParseError(`parsing time ${goQuote(value)}${message}`);
  const chunks = CHUNKS[layout];
  let rest = value;
  let year = 0;
  let month = 0;
  let day = 0;
  let hour = 0;
  let minute = 0;
  let second = 0;
  let nanos = 0;
  let offsetSeconds = 0;
  for (let i = 0; i < chunks.length; i++) {
    const chunk = chunks[i];
    for (const ch of chunk.prefix) {
      if (rest[0] !== ch) throw cannotParse(rest, chunk.prefix);
      rest = rest.slice(1);
    }
    const hold = rest;
    let bad = false;
    let rangeError = '';
    switch (chunk.element) {
      case 'year': {
        const n = rest.length >= 4 && isDigit(rest, 0) ? atoi(rest.slice(0, 4)) : undefined;
        if (n === undefined) bad = true;
        else [year, rest] = [n, rest.slice(4)];
        break;
      }
      case 'month':
      case 'day':
      case 'hour':
      case 'minute': {
        const r = getnum(rest, chunk.element !== 'hour');
        if (!r) {
          bad = true;
          break;
        }
        rest = r.rest;
        if (chunk.element === 'month') [month, rangeError] = [r.n, r.n <= 0 || r.n > 12 ? 'month' : ''];
        else if (chunk.element === 'day') day = r.n;
        else if (chunk.element === 'hour') [hour, rangeError] = [r.n, r.n >= 24 ? 'hour' : ''];
        else [minute, rangeError] = [r.n, r.n >= 60 ? 'minute' : ''];
        break;
      }
      case 'second': {
        const r = getnum(rest, true);
        if (!r) {
          bad = true;
          break;
        }
        [second, rest] = [r.n, r.rest];
        if (second >= 60) {
          rangeError = 'second';
          break;
        }
        // a fraction the layout does not name is accepted (any number of digits)
        if (rest.length >= 2 && (rest[0] === '.' || rest[0] === ',') && isDigit(rest, 1) && chunks[i + 1]?.element !== 'fraction6') {
          let n = 2;
          while (n < rest.length && isDigit(rest, n)) n++;
          nanos = parseNanoseconds(rest, n)?.nanos ?? 0;
          rest = rest.slice(n);
        }
        break;
      }
      case 'fraction6': {
        const parsed = rest.length >= 7 ? parseNanoseconds(rest, 7) : undefined;
        if (!parsed) bad = true;
        else [nanos, rangeError, rest] = [parsed.nanos, parsed.rangeError ?? '', rest.slice(7)];
        break;
      }
      case 'zone': {
        if (rest[0] === 'Z') {
          rest = rest.slice(1);
          break;
        }
        if (rest.length < 6 || rest[3] !== ':') {
          bad = true;
          break;
        }
        const [sign, hh, mm] = [rest[0], getnum(rest.slice(1, 3), true), getnum(rest.slice(4, 6), true)];
        rest = rest.slice(6);
        if (!hh || !mm || (sign !== '+' && sign !== '-')) bad = true;
        const [h, m] = [hh?.n ?? 0, mm?.n ?? 0];
        if (h > 24) rangeError = 'time zone offset hour';
        if (m > 60) rangeError = 'time zone offset minute';
        offsetSeconds = (sign === '-' ? -1 : 1) * (h * 60 + m) * 60;
        break;
      }
    }
    if (rangeError) throw withMessage(`: ${rangeError} out of range`);
    if (bad) throw cannotParse(hold, chunk.text);
  }
  if (rest.length > 0) throw withMessage(`: extra text: ${goQuote(rest)}`);
  if (day < 1 || day > daysIn(month, year)) throw withMessage(': day out of range');
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, 0);
  return { unixSeconds: d.getTime() / 1000 - offsetSeconds, nanos };
}

/** Go's zero time.Time (0001-01-01T00:00:00Z), which the metav1 types write as null. */
const ZERO_UNIX_SECONDS = -62135596800;

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** The JSON value metav1.Time (`Time`) or metav1.MicroTime writes for `t`. */
export function formatGoTime(t: GoTime, layout: GoTimeLayout): string | null {
  // metav1.Time is stored (protobuf) and written with whole seconds only
  const nanos = layout === 'Time' ? 0 : t.nanos;
  if (t.unixSeconds === ZERO_UNIX_SECONDS && nanos === 0) return null;
  const d = new Date(t.unixSeconds * 1000);
  const date = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}`;
  const clock = `${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}`;
  const fraction = layout === 'MicroTime' ? `.${pad(Math.floor(nanos / 1000), 6)}` : '';
  return `${date}T${clock}${fraction}Z`;
}
