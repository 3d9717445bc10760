/**
 * One definition of a validation message that two validators print: the operator's own
 * (spec-validation.ts, in TypeScript) and the API server's (a CRD `x-kubernetes-validations`
 * rule's `messageExpression`, in CEL; crd-cel-rules.ts). Both render the same template, so a
 * user sees the same words whichever of them refuses the spec.
 *
 *   const TOO_LOW = fieldMessage`must be at least 1, got ${'value'}; set it to 1 or more`;
 *   TOO_LOW.text({ value: '0' })                     // must be at least 1, got 0; set it to 1 or more
 *   TOO_LOW.cel({ value: 'string(self.parallelism)' }) // 'must be at least 1, got ' + string(self.parallelism) + '; set it to 1 or more'
 *
 * Guarantees: `cel()` is a CEL string expression (literals escaped as CEL string literals, each
 * slot's expression parenthesised) that evaluates to what `text()` returns when each slot's CEL
 * expression evaluates to the text given for it.
 */

/** A message with named slots, rendered as text or as a CEL string expression. */
export interface FieldMessage<Slot extends string> {
  /** The message with each slot replaced by its text. */
  text(values: Record<Slot, string>): string;
  /** A CEL expression building the message, each slot given as a CEL string expression. */
  cel(expressions: Record<Slot, string>): string;
}

/** A CEL string literal of `text` (single-quoted, with backslash escapes as cel-spec defines them). */
export function celStringLiteral(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;
}

/** Tags a template literal whose `${'slot'}` placeholders name the slots. */
export function fieldMessage<const Slot extends string>(literals: TemplateStringsArray, ...slots: Slot[]): FieldMessage<Slot> {
  return {
    text(values) {
      return literals.reduce((out, literal, i) => out + literal + (i < slots.length ? values[slots[i]] : ''), '');
    },
    cel(expressions) {
      const parts: string[] = [];
      literals.forEach((literal, i) => {
        if (literal !== '') parts.push(celStringLiteral(literal));
        if (i < slots.length) parts.push(`(${expressions[slots[i]]})`);
      });
      return parts.length ? parts.join(' + ') : "''";
    },
  };
}
