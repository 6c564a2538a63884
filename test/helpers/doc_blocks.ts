/**
 * The shell examples of README.md and docs/*.md as data: the fenced blocks, which of them are meant to run, the
 * output each step documents, and the npm scripts, deno tasks and fieldgate commands they name.
 */

/** A fenced shell block: ```sh, ```bash or ```shell, and `no-run` after the language for one not meant to run. */
export interface ShellBlock {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  body: string;
  run: boolean;
}

const SHELL_LANGUAGES = new Set(["sh", "bash", "shell"]);

/** The info string's first word is the language (CommonMark 4.5); `no-run` is a later word, so renderers ignore it. */
export function shellBlocks(file: string, text: string): ShellBlock[] {
  const blocks: ShellBlock[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    // A backtick fence's info string holds no backtick (CommonMark 4.5): "```` ```sh ````" opens no block.
    const open = /^(?:(`{3,})([^`]*)|(~{3,})(.*))$/.exec(lines[i] ?? "");
    if (!open) continue;
    const fence = open[1] ?? open[3] ?? "";
    const info = open[2] ?? open[4] ?? "";
    const closing = new RegExp(`^${fence[0]}{${fence.length},}\\s*$`);
    const end = lines.findIndex((l, j) => j > i && closing.test(l));
    const close = end === -1 ? lines.length : end;
    const words = info.trim().split(/\s+/);
    if (SHELL_LANGUAGES.has(words[0] ?? "")) {
      blocks.push({ file, line: i + 1, body: lines.slice(i + 1, close).join("\n"), run: !words.includes("no-run") });
    }
    i = close;
  }
  return blocks;
}

/** One command of a block and the output documented below it as `# {…}` or `# […]` lines, if any. */
export interface Step {
  script: string;
  documented?: string;
}

/** Splits a block after each documented output, so each step's stdout can be compared with what it documents. */
export function steps(body: string): Step[] {
  const result: Step[] = [];
  let script: string[] = [];
  for (const line of body.split("\n")) {
    const output = /^# ([{[].*)$/.exec(line);
    if (output) {
      result.push({ script: script.join("\n"), documented: output[1] });
      script = [];
    } else {
      script.push(line);
    }
  }
  if (script.some((l) => l.trim() !== "")) result.push({ script: script.join("\n") });
  return result;
}

/**
 * A step that keeps a command's output through a filter, `VAR=$(command | filter)`, prints nothing, yet documents
 * the command's output: the same step that also prints that output, then sets VAR as before. Others are unchanged.
 */
export function printingCapture(script: string): string {
  const capture = /^([A-Za-z_]\w*)=\$\(([\s\S]*)\|([^|]*)\)$/.exec(script.trim());
  if (!capture) return script;
  const [, name, command, filter] = capture;
  return `fieldgate_docs_out=$(${command})\nprintf '%s' "$fieldgate_docs_out"\n` +
    `${name}=$(printf '%s' "$fieldgate_docs_out" |${filter})`;
}

/**
 * Where `actual` departs from the shape documented in `documented`, or undefined when it matches: the same keys and
 * array lengths, equal values, except that `…` in a documented string stands for any text (a token) and a number
 * under a key ending in `_at` (a time) only has to be a number.
 */
export function shapeMismatch(documented: unknown, actual: unknown, path = "$"): string | undefined {
  if (typeof documented === "string" && documented.includes("…")) {
    const [head, tail] = [documented.slice(0, documented.indexOf("…")), documented.slice(documented.indexOf("…") + 1)];
    const ok = typeof actual === "string" && actual.startsWith(head) && actual.endsWith(tail);
    return ok ? undefined : `${path}: ${JSON.stringify(actual)} is not ${JSON.stringify(documented)}`;
  }
  if (typeof documented === "number" && path.endsWith("_at")) {
    return typeof actual === "number" ? undefined : `${path}: ${JSON.stringify(actual)} is not a number`;
  }
  if (Array.isArray(documented)) {
    if (!Array.isArray(actual) || actual.length !== documented.length) return `${path}: not an array of ${documented.length}`;
    return documented.map((d, i) => shapeMismatch(d, actual[i], `${path}[${i}]`)).find((m) => m !== undefined);
  }
  if (documented !== null && typeof documented === "object") {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual)) return `${path}: not an object`;
    const keys = Object.keys(documented).sort().join(",");
    const actualKeys = Object.keys(actual).sort().join(",");
    if (keys !== actualKeys) return `${path}: keys ${actualKeys}, documented ${keys}`;
    return Object.entries(documented)
      .map(([k, d]) => shapeMismatch(d, (actual as Record<string, unknown>)[k], `${path}.${k}`))
      .find((m) => m !== undefined);
  }
  return documented === actual ? undefined : `${path}: ${JSON.stringify(actual)} is not ${JSON.stringify(documented)}`;
}

/** Shell command lines of a block, with `\` continuations joined and comments dropped. */
export function commandLines(body: string): string[] {
  return body.replace(/\\\n/g, " ").split("\n").map((l) => l.replace(/(^|\s)#.*$/, "").trim()).filter(Boolean);
}

/** The inline code spans of a markdown text: command lines written into prose. */
export function inlineCode(text: string): string[] {
  return [...text.matchAll(/(?<!`)`([^`\n]+)`(?!`)/g)].map((m) => m[1] ?? "");
}

/** npm scripts a command line runs: `npm run X`, `npm run --silent X`, `npm start`, `npm test`. */
export function npmScripts(line: string): string[] {
  const named = [...line.matchAll(/\bnpm run(?: --?[a-z-]+)* ([a-z][\w:-]*)/g)].map((m) => m[1] ?? "");
  const builtIn = [...line.matchAll(/\bnpm (start|test)\b/g)].map((m) => m[1] ?? "");
  return [...named, ...builtIn];
}

/** Files of the repository a command line runs with `node`: `node bench/inproc.ts`. */
export function nodeFiles(line: string): string[] {
  return [...line.matchAll(/\bnode (?:--?[\w=-]+ )*([\w./-]+\.[cm]?[jt]s)\b/g)].map((m) => m[1] ?? "");
}

/** deno tasks a command line runs: `deno task X`. */
export function denoTasks(line: string): string[] {
  return [...line.matchAll(/\bdeno task ([a-z][\w:-]*)/g)].map((m) => m[1] ?? "");
}

/** A fieldgate CLI invocation: the words after the entry point up to the first option or shell operator. */
export interface Invocation {
  words: string[];
  flags: string[];
}

/** fieldgate invocations of a command line, through `npm run … fieldgate --` or `deno task cli`. */
export function fieldgateInvocations(line: string): Invocation[] {
  const starts = [...line.matchAll(/\bnpm run(?: --?[a-z-]+)* fieldgate -- |\bdeno task cli /g)];
  return starts.map((m) => {
    // $(…) is one argument; the first pipe, list operator, redirection or subshell end ends the command.
    const rest = line.slice(m.index + m[0].length).replace(/\$\([^)]*\)/g, "x").split(/\s*(?:\||;|&&|>|\)|$)/)[0] ?? "";
    const tokens = rest.split(/\s+/).filter(Boolean);
    const firstOption = tokens.findIndex((t) => t.startsWith("-"));
    const words = (firstOption === -1 ? tokens : tokens.slice(0, firstOption)).filter((t) => /^[a-z][a-z-]*$/.test(t));
    const flags = tokens.filter((t) => /^--[a-z][a-z-]*$/.test(t));
    return { words, flags };
  });
}
