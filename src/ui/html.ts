// HTML templating: one tagged template that escapes every interpolated value unless marked raw.

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Markup that is already safe and must not be escaped again. */
export interface RawHtml {
  readonly __html: string;
}

/** Escapes text for element content and quoted attribute values. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** Marks trusted markup (our own templates' output) as raw. */
export function raw(markup: string): RawHtml {
  return { __html: markup };
}

function render(value: unknown): string {
  if (value === null || value === undefined || value === false) return "";
  if (Array.isArray(value)) return value.map(render).join("");
  if (typeof value === "object" && "__html" in value) return String((value as RawHtml).__html);
  return escapeHtml(String(value));
}

/** Tagged template: html`<p>${userText}</p>` escapes userText; nested html`` results pass through. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): RawHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return raw(out);
}
