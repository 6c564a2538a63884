// The one stylesheet, served at /assets/style.css: the CSP allows styles only from our origin, never inline.

/**
 * CSS for every page: readable on phones and desktops, visible focus, WCAG AA contrast, respects dark mode.
 * Focus is two-toned in light mode, as GOV.UK's is: a dark ring (--focus-ring, 15:1 on the page and the cards, so
 * WCAG 1.4.11's 3:1 holds) inside a yellow halo that sets it off from dark controls such as the primary button. In
 * dark mode the yellow alone has 11:1 on the page. Forced-colors mode drops the halo and keeps the outline.
 */
export const STYLESHEET = `
:root { --fg: #1b1f23; --bg: #ffffff; --muted: #4a5560; --accent: #0b5cad; --accent-fg: #ffffff;
  --danger: #a4161a; --card: #f5f7f9; --border: #c9d1d9; --focus: #ffbf47; --focus-ring: #0b1f33; color-scheme: light dark; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6edf3; --bg: #0d1117; --muted: #a8b3bd; --accent: #58a6ff; --accent-fg: #0d1117;
    --danger: #ff8589; --card: #161b22; --border: #3d444d; }
}
* { box-sizing: border-box; }
html { font-size: 100%; -webkit-text-size-adjust: 100%; }
body { margin: 0; font: 1rem/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
header.site { padding: 0 1rem; border-bottom: 1px solid var(--border); }
.brand { display: inline-flex; align-items: center; min-height: 2.75rem; font-weight: 700; color: var(--fg); text-decoration: none; }
main { max-width: 44rem; margin: 0 auto; padding: 1rem; overflow-wrap: anywhere; }
h1 { font-size: 1.6rem; line-height: 1.25; margin: 1rem 0; }
h2 { font-size: 1.25rem; margin: 1.5rem 0 0.5rem; }
h3 { font-size: 1.1rem; margin: 0 0 0.5rem; }
a { color: var(--accent); }
.lead { font-size: 1.1rem; }
.muted { color: var(--muted); }
.card { background: var(--card); border: 1px solid var(--border); border-radius: 0.5rem; padding: 1rem; margin: 1rem 0; }
form.card { display: grid; gap: 0.5rem; }
label { font-weight: 600; }
input[type=text], input[type=password] { width: 100%; padding: 0.6rem; font: inherit; color: var(--fg);
  background: var(--bg); border: 1px solid var(--muted); border-radius: 0.35rem; }
button, .button { display: inline-block; min-height: 2.75rem; padding: 0.6rem 1.2rem; font: inherit; font-weight: 600;
  border-radius: 0.35rem; border: 1px solid var(--accent); background: var(--bg); color: var(--accent); cursor: pointer;
  text-decoration: none; text-align: center; }
button.primary, .button.primary { background: var(--accent); color: var(--accent-fg); }
button.danger { border-color: var(--danger); color: var(--danger); }
button.link { padding: 0; border: 0; background: none; color: var(--accent); text-decoration: underline; font-weight: 400; }
:focus-visible { outline: 3px solid var(--focus-ring); outline-offset: 0; box-shadow: 0 0 0 6px var(--focus); }
input:focus-visible { border-color: var(--accent); }
@media (prefers-color-scheme: dark) {
  :focus-visible { outline-color: var(--focus); outline-offset: 2px; box-shadow: none; }
}
.actions { display: flex; flex-wrap: wrap; gap: 0.75rem; margin: 1rem 0; }
.actions form { margin: 0; }
form.inline { margin: 1rem 0; }
.error { color: var(--danger); font-weight: 600; }
.notice { border-left: 4px solid var(--accent); padding-left: 0.75rem; }
ul.scopes { padding-left: 1.25rem; }
ul.apps { list-style: none; padding: 0; }
ul.links li { margin: 0.5rem 0; }
.status { font-size: 0.9rem; font-weight: 400; color: var(--muted); }
pre { overflow-x: auto; white-space: pre-wrap; word-break: break-all; background: var(--bg); border: 1px solid var(--border);
  border-radius: 0.35rem; padding: 0.75rem; font-size: 0.9rem; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; }
caption { text-align: left; color: var(--muted); padding: 0.25rem 0; }
th, td { text-align: left; vertical-align: top; padding: 0.5rem; border-bottom: 1px solid var(--border); }
@media (max-width: 30rem) { .actions button, .actions .button { width: 100%; } .actions form { flex: 1 1 100%; } }
`;
