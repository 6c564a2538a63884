// The page shell shared by every HTML page: doctype, viewport, stylesheet link, header and main landmark.
import { html, type RawHtml } from "./html.ts";

/** Wraps page content in the common document; `title` is escaped. */
export function layout(title: string, content: RawHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · fieldgate</title>
<link rel="stylesheet" href="/assets/style.css">
</head>
<body>
<header class="site"><a href="/" class="brand">fieldgate</a></header>
<main>
${content}
</main>
</body>
</html>`.__html;
}
