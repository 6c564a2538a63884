import { test } from "../helpers/bounded.ts";
import assert from "node:assert/strict";
import { escapeHtml, html, raw } from "../../src/ui/html.ts";

test("escapeHtml escapes the five significant characters", () => {
  assert.equal(escapeHtml(`<a href="x" title='y'>&</a>`), "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;");
});

test("html escapes every interpolated value", () => {
  const evil = `"><script>alert(1)</script>`;
  assert.equal(html`<input value="${evil}">`.__html, `<input value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;">`);
});

test("html passes nested templates and explicit raw markup through unescaped", () => {
  const inner = html`<b>${"<x>"}</b>`;
  assert.equal(html`<p>${inner}${raw("<br>")}</p>`.__html, "<p><b>&lt;x&gt;</b><br></p>");
});

test("html renders arrays, and nothing for null, undefined and false", () => {
  assert.equal(html`${["<a>", html`<i>b</i>`]}`.__html, "&lt;a&gt;<i>b</i>");
  assert.equal(html`[${null}${undefined}${false}]`.__html, "[]");
  assert.equal(html`${0}`.__html, "0");
});

test("an object merely shaped like raw markup from user data is still escaped when it is a string", () => {
  assert.equal(html`${'{"__html":"<b>"}'}`.__html, "{&quot;__html&quot;:&quot;&lt;b&gt;&quot;}");
});
