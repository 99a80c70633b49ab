// The view of a shell command that tool-gate's deny rules are matched against: what the
// command runs, as a shell would read it.
//
// The command is split into words and simple commands as bash does (quotes, `$'…'`,
// backslashes, `$(…)`, backticks, `${…}`, comments, here-documents), and the view is the
// command with:
//
// - every word written without its quotes (`"rm" -rf '/'` reads `rm -rf /`);
// - a target that is `/`, the home folder or a folder right under `/`, however it is
//   written, in its plain form: `/home/alice` (the user's home written out), `$HOME/`,
//   `"${HOME}"` and `~alice` read `~`; `/tmp/..` reads `/`; `*` or `.` after `cd /` or
//   `cd ~` (or in a workspace that is one of them) read `/*`, `~/*`, `~`;
// - the arguments of a command that only prints or records them (echo, printf, grep,
//   git commit/tag/log/show, gh pr/issue, …) replaced by `_`, and comments left out, so
//   `git commit -m "guard against rm -rf /"` is not taken for `rm -rf /`. Only when
//   nothing in the command could run that text: no shell or interpreter named anywhere
//   (`echo "…" | sh`, `echo "…" > x.sh; bash x.sh`), no process substitution, no command
//   run from a path or a variable, no later pipeline stage but plain filters (grep, head,
//   sort, …), and never inside `$(…)` or backticks, whose output may be run;
// - below it, one line per command run by another: `$(…)`, backticks, `<(…)`, the
//   string of `sh -c`/`bash -c`/`su -c`, the words of `eval`, each read the same way.
//
// Anything the reader does not follow (an unterminated quote, nesting over 8 deep) gives
// no view: the caller falls back to matching the command with every quote stripped.

import { statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import process from "node:process";

const MAX_DEPTH = 8;

class ShellSyntax extends Error {}

interface WordTok {
  kind: "word";
  start: number;
  end: number;
  /** The word as the shell passes it on: quotes removed, expansions left as written. */
  value: string;
  /** Some part was quoted or escaped. */
  quoted: boolean;
  /** Holds an unquoted or double-quoted `$…` or a backtick (a value known only at run time). */
  dynamic: boolean;
  /** Source text of each `$(…)`, `` `…` ``, `<(…)`, `>(…)` in it. */
  subs: string[];
  /** Is a process substitution, or holds one. */
  procSub: boolean;
}

interface OpTok {
  kind: "op";
  start: number;
  end: number;
  op: string;
}

interface RedirTok {
  kind: "redir";
  start: number;
  end: number;
  op: string;
  /** The here-document's body, once read. */
  body?: { start: number; end: number };
  /** Its delimiter was quoted (`<<'EOF'`), so the body is taken as it is: no `$(…)` runs. */
  literal?: boolean;
  /** The word it redirects to or from (`out.txt` of `> out.txt`), once read. */
  target?: string;
}

interface CommentTok {
  kind: "comment";
  start: number;
  end: number;
}

type Tok = WordTok | OpTok | RedirTok | CommentTok;

const OPERATORS = [";;&", ";;", ";&", "&&", "||", "|&", "&", "|", ";", "(", ")"];
const REDIRECTS = ["<<<", "<<-", "&>>", "<<", "<>", "<&", ">&", ">>", ">|", "&>", "<", ">"];
const META = new Set([" ", "\t", "\n", ";", "&", "|", "(", ")", "<", ">"]);

/** `\x41`, `\101`, `\n`, … of a `$'…'` string. */
function ansiC(body: string): string {
  return body.replace(/\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)/gs, (_, e: string) => {
    const simple: Record<string, string> = { n: "\n", t: "\t", r: "\r", a: "\x07", b: "\b", e: "\x1b", E: "\x1b", f: "\f", v: "\v" };
    if (e in simple) return simple[e] ?? "";
    if (/^[xuU]/.test(e)) return String.fromCodePoint(Math.min(parseInt(e.slice(1), 16), 0x10ffff));
    if (/^[0-7]/.test(e)) return String.fromCharCode(parseInt(e, 8) & 0xff);
    if (e.startsWith("c")) return String.fromCharCode((e.charCodeAt(1) ?? 64) & 0x1f);
    return e;
  });
}

class Lexer {
  readonly toks: Tok[] = [];
  private i: number;
  private pending: { delim: string; strip: boolean; tok: RedirTok }[] = [];

  private readonly src: string;
  private readonly depth: number;
  /** Stop at an unmatched `)` (the end of a `$(…)`). */
  private readonly stopAtParen: boolean;

  constructor(src: string, start: number, depth: number, stopAtParen: boolean) {
    if (depth > MAX_DEPTH) throw new ShellSyntax("nested too deep");
    this.src = src;
    this.i = start;
    this.depth = depth;
    this.stopAtParen = stopAtParen;
  }

  /** Lexes to the end (or the unmatched `)`); returns the index after it. */
  run(): number {
    const { src } = this;
    let parens = 0;
    while (this.i < src.length) {
      const c = src[this.i] ?? "";
      if (c === " " || c === "\t" || c === "\r") {
        this.i++;
        continue;
      }
      if (c === "\\" && src[this.i + 1] === "\n") {
        this.i += 2;
        continue;
      }
      if (c === "\n") {
        this.toks.push({ kind: "op", start: this.i, end: this.i + 1, op: "\n" });
        this.i++;
        this.readHeredocs();
        continue;
      }
      if (c === "#") {
        const nl = src.indexOf("\n", this.i);
        const end = nl < 0 ? src.length : nl;
        this.toks.push({ kind: "comment", start: this.i, end });
        this.i = end;
        continue;
      }
      if ((c === "<" || c === ">") && src[this.i + 1] === "(") {
        this.word();
        continue;
      }
      const fd = /^(?:\d+|\{[A-Za-z_]\w*\})(?=[<>])/.exec(src.slice(this.i, this.i + 40));
      const at = this.i + (fd ? fd[0].length : 0);
      const redir = REDIRECTS.find((r) => src.startsWith(r, at));
      if (redir && !(src[at + redir.length] === "(" && (redir === "<" || redir === ">"))) {
        const tok: RedirTok = { kind: "redir", start: this.i, end: at + redir.length, op: redir };
        this.toks.push(tok);
        this.i = at + redir.length;
        if (redir === "<<" || redir === "<<-") {
          while (src[this.i] === " " || src[this.i] === "\t") this.i++;
          const delim = this.word();
          if (!delim) throw new ShellSyntax("here-document without a delimiter");
          tok.literal = delim.quoted;
          this.pending.push({ delim: delim.value, strip: redir === "<<-", tok });
        }
        continue;
      }
      const op = OPERATORS.find((o) => src.startsWith(o, this.i));
      if (op) {
        if (op === "(") parens++;
        if (op === ")") {
          if (parens === 0 && this.stopAtParen) {
            this.readHeredocs();
            return this.i + 1;
          }
          parens = Math.max(0, parens - 1);
        }
        this.toks.push({ kind: "op", start: this.i, end: this.i + op.length, op });
        this.i += op.length;
        continue;
      }
      this.word();
    }
    if (this.stopAtParen) throw new ShellSyntax("unterminated $(");
    this.readHeredocs();
    return this.i;
  }

  /** Bodies of the here-documents opened on the line just ended. */
  private readHeredocs(): void {
    const { src } = this;
    for (const h of this.pending) {
      const start = this.i;
      let end = src.length;
      while (this.i < src.length) {
        const nl = src.indexOf("\n", this.i);
        const lineEnd = nl < 0 ? src.length : nl;
        const line = src.slice(this.i, lineEnd);
        if ((h.strip ? line.replace(/^\t+/, "") : line) === h.delim) {
          end = this.i;
          this.i = nl < 0 ? src.length : nl + 1;
          break;
        }
        this.i = nl < 0 ? src.length : nl + 1;
      }
      h.tok.body = { start, end: Math.max(start, Math.min(end, this.i)) };
    }
    this.pending = [];
  }

  /** A command substitution's source from `from` (after `$(`); returns its end (after `)`). */
  private substitution(from: number): number {
    const inner = new Lexer(this.src, from, this.depth + 1, true);
    return inner.run();
  }

  private word(): WordTok | null {
    const { src } = this;
    const start = this.i;
    const w: WordTok = { kind: "word", start, end: start, value: "", quoted: false, dynamic: false, subs: [], procSub: false };
    if ((src[this.i] === "<" || src[this.i] === ">") && src[this.i + 1] === "(") {
      const end = this.substitution(this.i + 2);
      w.subs.push(src.slice(this.i + 2, end - 1));
      w.value = src.slice(this.i, end);
      w.procSub = true;
      w.dynamic = true;
      this.i = end;
    }
    while (this.i < src.length) {
      const c = src[this.i] ?? "";
      if (META.has(c)) break;
      if (c === "\\") {
        if (src[this.i + 1] === "\n") {
          this.i += 2;
          continue;
        }
        w.quoted = true;
        w.value += src[this.i + 1] ?? "";
        this.i += 2;
      } else if (c === "'") {
        const close = src.indexOf("'", this.i + 1);
        if (close < 0) throw new ShellSyntax("unterminated '");
        w.quoted = true;
        w.value += src.slice(this.i + 1, close);
        this.i = close + 1;
      } else if (c === "\"") {
        this.i++;
        w.quoted = true;
        this.doubleQuoted(w);
      } else if (c === "$" && src[this.i + 1] === "'") {
        let j = this.i + 2;
        while (j < src.length && src[j] !== "'") j += src[j] === "\\" ? 2 : 1;
        if (j >= src.length) throw new ShellSyntax("unterminated $'");
        w.quoted = true;
        w.value += ansiC(src.slice(this.i + 2, j));
        this.i = j + 1;
      } else if (c === "$" && src[this.i + 1] === "\"") {
        this.i += 2;
        w.quoted = true;
        this.doubleQuoted(w);
      } else if (c === "$" || c === "`") {
        this.expansion(w);
      } else {
        w.value += c;
        this.i++;
      }
    }
    w.end = this.i;
    if (w.end === start) return null;
    this.toks.push(w);
    return w;
  }

  /** Inside `"…"`, from after the opening quote to after the closing one. */
  private doubleQuoted(w: WordTok): void {
    const { src } = this;
    while (this.i < src.length) {
      const c = src[this.i] ?? "";
      if (c === "\"") {
        this.i++;
        return;
      }
      if (c === "\\") {
        const next = src[this.i + 1] ?? "";
        if (next === "\n") {
          this.i += 2;
          continue;
        }
        w.value += "$`\"\\".includes(next) ? next : "\\" + next;
        this.i += 2;
      } else if (c === "$" || c === "`") {
        this.expansion(w);
      } else {
        w.value += c;
        this.i++;
      }
    }
    throw new ShellSyntax("unterminated \"");
  }

  /** `$(…)`, `$((…))`, `${…}`, `$name`, `` `…` ``: kept as written in the value. */
  private expansion(w: WordTok): void {
    const { src } = this;
    const from = this.i;
    w.dynamic = true;
    if (src[this.i] === "`") {
      let j = this.i + 1;
      let inner = "";
      while (j < src.length && src[j] !== "`") {
        if (src[j] === "\\" && "$`\\".includes(src[j + 1] ?? "")) {
          inner += src[j + 1];
          j += 2;
        } else {
          inner += src[j];
          j++;
        }
      }
      if (j >= src.length) throw new ShellSyntax("unterminated `");
      w.subs.push(inner);
      this.i = j + 1;
    } else if (src.startsWith("$((", this.i)) {
      let depth = 0;
      let j = this.i + 1;
      for (; j < src.length; j++) {
        if (src[j] === "(") depth++;
        else if (src[j] === ")" && --depth === 0) break;
      }
      if (j >= src.length) throw new ShellSyntax("unterminated $((");
      this.i = j + 1;
    } else if (src[this.i + 1] === "(") {
      const end = this.substitution(this.i + 2);
      w.subs.push(src.slice(this.i + 2, end - 1));
      this.i = end;
    } else if (src[this.i + 1] === "{") {
      let depth = 0;
      let j = this.i + 1;
      for (; j < src.length; j++) {
        if (src[j] === "{") depth++;
        else if (src[j] === "}" && --depth === 0) break;
      }
      if (j >= src.length) throw new ShellSyntax("unterminated ${");
      this.i = j + 1;
    } else {
      const m = /^\$(?:[A-Za-z_]\w*|[0-9@*#?$!-])?/.exec(src.slice(this.i, this.i + 256));
      this.i += Math.max(1, m ? m[0].length : 1);
      if (this.i - from === 1) w.dynamic = false; // a lone `$` is literal
    }
    w.value += src.slice(from, this.i);
  }
}

interface Command {
  words: WordTok[];
  redirs: RedirTok[];
  /** The operator that ends it (`;`, `&&`, `|`, a newline, `)`, or "" at the end). */
  after: string;
}

function commandsOf(toks: Tok[]): Command[] {
  const out: Command[] = [];
  let cur: Command = { words: [], redirs: [], after: "" };
  let redirNext: RedirTok | null = null;
  for (const t of toks) {
    if (t.kind === "op") {
      cur.after = t.op;
      out.push(cur);
      cur = { words: [], redirs: [], after: "" };
      redirNext = null;
    } else if (t.kind === "redir") {
      cur.redirs.push(t);
      redirNext = t;
    } else if (t.kind === "word") {
      // The redirection's target, not an argument.
      if (redirNext) {
        redirNext.target ??= t.value;
        redirNext = null;
      } else cur.words.push(t);
    }
  }
  out.push(cur);
  return out.filter((c) => c.words.length > 0 || c.redirs.length > 0 || c.after !== "");
}

const RESERVED = new Set(["!", "{", "}", "then", "do", "else", "elif", "if", "while", "until", "time", "fi", "done"]);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=/;

/** Index of the command word (after assignments and reserved words), or -1. */
function commandIndex(words: WordTok[], src: string): number {
  let k = 0;
  while (k < words.length) {
    const w = words[k];
    if (!w) break;
    const raw = src.slice(w.start, w.end);
    if (ASSIGNMENT.test(raw) || (!w.quoted && RESERVED.has(w.value))) k++;
    else return k;
  }
  return -1;
}

/** The plain name a word gives as a command (`/usr/bin/git` → `git`), or null when it is computed. */
function plainName(w: WordTok | undefined): string | null {
  if (!w || w.dynamic || /[*?[]/.test(w.value)) return null;
  return w.value;
}

const SHELLS = /^(?:sh|bash|zsh|ksh|mksh|dash|ash|fish|csh|tcsh|busybox)$/;
/** Any of these named anywhere may run text the command holds (from a pipe, a file, an fd). */
const RUNNERS =
  /^(?:sh|bash|zsh|ksh|mksh|dash|ash|fish|csh|tcsh|busybox|python[\d.]*|pypy3?|perl|ruby|node|nodejs|deno|bun|php|lua|luajit|Rscript|osascript|pwsh|powershell|tclsh|wish|expect|awk|gawk|mawk|nawk|sed|gsed|xargs|parallel|at|batch|crontab|ssh|su|runuser|sudo|doas|script|watch|source|eval|exec|coproc|mkfifo|command|builtin|nohup|env|timeout|nice|setsid|docker|podman|kubectl)$/;
/** Commands that run no part of their arguments, with the subcommands for which that holds. */
const INERT: Record<string, RegExp | null> = {
  echo: null,
  printf: null,
  grep: null,
  egrep: null,
  fgrep: null,
  zgrep: null,
  rg: null,
  cat: null,
  head: null,
  tail: null,
  wc: null,
  git: /^(?:commit|tag|log|show|notes|stash|grep|shortlog)$/,
  gh: /^(?:pr|issue)$/,
  // Name a program without running it (`which mkfs.ext4`, `man mkfs`).
  which: null,
  whereis: null,
  type: null,
  man: null,
  whatis: null,
  apropos: null,
};
/** Options of those that do run something: `git grep -O<pager>`, `rg --pre <cmd>`. */
const INERT_UNSAFE_OPTION = /^(?:-[A-Za-z]*O|--op|--pre(?:=|$))/; // git takes `--open=…`, `-iO…`
/** `man -P <pager>`, `man -H<browser>`, `--pager`, `--html` (and their prefixes). */
const MAN_UNSAFE_OPTION = /^(?:-[A-Za-z]*[PH]|--pa|--ht)/; // man takes `--pag=…` for `--pager`
/** Pipeline stages after an inert command that only filter its text. */
const FILTERS = /^(?:grep|egrep|fgrep|rg|head|tail|wc|sort|cut|tr|cat|column|nl|fold|fmt|jq)$/;
/** A filter stage that writes a file of its own (`sort -o FILE`). */
const FILTER_WRITES = /^(?:-[A-Za-z]*o|--output)/;
/**
 * Whether a command writes its output to a file (`> f`, `>> f`, `&> f`; not `/dev/null` or
 * another stream): text written so may be a script something runs later (`make`, `npm
 * run`, a git hook), so what it leaves out of the view is kept as written text
 * (`Analysis.written`). (`tee` is no plain filter for the same reason.)
 */
function writesAFile(c: Command): boolean {
  return c.redirs.some((r) => {
    const target = r.target ?? "";
    if (/^\/dev\/(?:null|stdout|stderr|fd\/[12])$/.test(target)) return false;
    // `>&FILE` writes FILE (`>&2` only duplicates a stream); `<>` opens it for writing too.
    return /^(?:>|>>|>\||&>|&>>|<>)$/.test(r.op) || (r.op === ">&" && !/^\d+-?$/.test(target));
  });
}

/**
 * Whether `src` sends the output of a group, a subshell or a loop to a file
 * (`{ echo …; } > f`, `( … ) >> f`, `done > f`): the redirection is the group's, not that
 * of the commands inside it, so each of those writes the file.
 */
function groupWritesAFile(src: string): boolean {
  return /(?:[})]|\bdone|\bfi|\besac)\s*(?:\d*(?:>>?|>\||>&(?!\s*\d))|&>>?)\s*(?!\/dev\/null\b)[^\s;&|]/.test(src);
}
/** Folders whose programs a command may name by path without counting as "run from a path". */
const SYSTEM_BIN = /^\/(?:usr\/(?:local\/)?)?s?bin\/[^/]+$/;

/** How many words, from the command word, an inert command keeps (`git commit`, `git -C dir log`). */
function inertPrefix(words: WordTok[], k: number): number {
  const name = basename(plainName(words[k]) ?? "");
  if (!(name in INERT)) return -1;
  const sub = INERT[name];
  if (!sub) return 1;
  let j = k + 1;
  if (name === "git" && plainName(words[j]) === "-C" && words[j + 2]) j += 2;
  const s = plainName(words[j]);
  return s !== null && sub.test(s) ? j - k + 1 : -1;
}

function basename(name: string): string {
  return SYSTEM_BIN.test(name) ? name.slice(name.lastIndexOf("/") + 1) : name;
}

/** `/`, the home folder, a folder holding it, or a folder right under `/`. */
function dangerous(path: string, home: string): boolean {
  if (path === "/" || path === home) return true;
  if (/^\/[^/]+$/.test(path)) return true;
  return home !== "/" && home.startsWith(path + "/");
}

function plainForm(path: string, home: string): string {
  return path === home ? "~" : path;
}

const programs = new Map<string, boolean>();

/** Whether `name` is a program on PATH (an executable file there), as a wrapper runs it. */
function isProgram(name: string): boolean {
  const known = programs.get(name);
  if (known !== undefined) return known;
  const found = (process.env.PATH ?? "").split(":").some((dir: string) => {
    if (!dir.startsWith("/")) return false;
    try {
      const st = statSync(join(dir, name));
      return st.isFile() && (st.mode & 0o111) !== 0;
    } catch {
      return false;
    }
  });
  programs.set(name, found);
  return found;
}

/**
 * The plain form of a word naming `/`, the home folder or a folder right under `/`
 * (with a trailing `/*` kept), or null for any other word.
 */
function canonical(w: WordTok, cwds: Set<string | null>, home: string): string | null {
  if (w.subs.length > 0) return null;
  let v = w.value;
  if (v === "" || v.startsWith("-")) return null;
  const homeOk = home.startsWith("/") && home !== "/";
  if (homeOk) {
    v = v.replace(/^(?:\$HOME|\$\{HOME\}|~)(?=$|\/)/, home);
    const user = /^~([A-Za-z_][\w.-]*)(?=$|\/)/.exec(v);
    if (user) v = (user[1] === "root" ? "/root" : join(dirname(home), user[1] ?? "")) + v.slice(user[0].length);
  }
  v = v.replace(/^(?:\$PWD|\$\{PWD\})(?=$|\/)/, ".");
  if (v.includes("$") || v.includes("`")) return null;
  let glob = "";
  if (v === "*") {
    v = ".";
    glob = "/*";
  } else if (v.endsWith("/*")) {
    v = v.slice(0, -2) || "/";
    glob = "/*";
  }
  if (/[*?[\]{}]/.test(v)) return null;
  // A bare name that is a program is the command a wrapper runs (`sudo rm -rf etc` in
  // `/`), not the folder `/rm`.
  if (/^[^/~$.*][^/]*$/.test(w.value) && isProgram(w.value)) return null;
  const bases = v.startsWith("/") ? [v] : [...cwds].filter((c): c is string => c !== null).map((c) => join(c, v));
  for (const b of bases) {
    const r = resolve(b);
    if (dangerous(r, home)) {
      const p = plainForm(r, home);
      return glob ? (p === "/" ? "/*" : p + glob) : p;
    }
  }
  return null;
}

/** Strips what is left of quotes and backslashes, as the quote-blind view does. */
function stripped(text: string): string {
  return text.replace(/\\(?=[A-Za-z])/g, "").replace(/["']/g, "");
}

interface Analysis {
  lines: string[];
  /** Characters in `lines` so far. */
  size: number;
  /** Text left out of `lines` that a command writes to a file (see `writesAFile`). */
  written: string[];
}

/** Past this many characters of view, strings that only may be commands are not read. */
const OPTIONAL_BUDGET = 256 * 1024;

function analyse(
  src: string,
  cwdsIn: Set<string | null>,
  home: string,
  depth: number,
  mayBlank: boolean,
  out: Analysis,
): void {
  const lexer = new Lexer(src, 0, depth, false);
  lexer.run();
  const toks = lexer.toks;
  const commands = commandsOf(toks);

  // May an inert command's arguments be left out here? Not when anything in the command
  // could run their text.
  let blankable = mayBlank;
  for (const t of toks) {
    if (!blankable) break;
    if (t.kind === "word" && (t.procSub || RUNNERS.test(basename(t.value)))) blankable = false;
  }
  for (const c of commands) {
    if (!blankable) break;
    const k = commandIndex(c.words, src);
    if (k < 0) continue;
    const name = plainName(c.words[k]);
    if (name === null || name === "." || (name.includes("/") && !SYSTEM_BIN.test(name))) blankable = false;
  }

  // `alt`: the word's text in a second line of the view, where a bare name is left as it
  // is (see below).
  const groupWrites = groupWritesAFile(src);
  const edits: { start: number; end: number; text: string; alt?: string }[] = [];
  const nested: { src: string; cwds: Set<string | null>; mayBlank: boolean; optional?: boolean }[] = [];
  const assigned: string[] = [];
  let computedCommand = false;
  // The arguments of each command whose command word is computed (`$a -rf /`).
  const computedArgs: string[] = [];
  let cwds = new Set(cwdsIn);

  for (let ci = 0; ci < commands.length; ci++) {
    const c = commands[ci];
    if (!c) continue;
    const k = commandIndex(c.words, src);
    const name = k >= 0 ? basename(plainName(c.words[k]) ?? "") : "";
    for (const w of k >= 0 ? c.words.slice(0, k) : c.words) {
      const eq = w.value.indexOf("=");
      if (eq > 0) assigned.push(w.value.slice(eq + 1));
    }
    if (k >= 0 && plainName(c.words[k]) === null) {
      computedCommand = true;
      computedArgs.push(c.words.slice(k + 1).map((w) => w.value).join(" "));
    }

    let keep = -1; // words from k + keep on are left out
    let pipeWrites = false; // what it prints ends up in a file (see `writesAFile`)
    if (blankable && k >= 0) {
      const prefix = inertPrefix(c.words, k);
      let later = ci;
      let filtersOnly = true;
      pipeWrites = writesAFile(c) || groupWrites;
      while (commands[later]?.after === "|" || commands[later]?.after === "|&") {
        later++;
        const next = commands[later];
        const nk = next ? commandIndex(next.words, src) : -1;
        if (!next || nk < 0 || !FILTERS.test(plainName(next.words[nk]) ?? "")) filtersOnly = false;
        // `echo "…" | cat >> Makefile` (or `| sort -o Makefile`) writes the text as surely
        // as `echo "…" >> Makefile`.
        if (next && (writesAFile(next) || next.words.slice(nk + 1).some((w) => FILTER_WRITES.test(w.value)))) {
          pipeWrites = true;
        }
      }
      const unsafe = c.words
        .slice(k)
        .some((w) => INERT_UNSAFE_OPTION.test(w.value) || (name === "man" && MAN_UNSAFE_OPTION.test(w.value)));
      if (prefix > 0 && filtersOnly && !unsafe) keep = prefix;
    }

    const writes = keep > 0 && pipeWrites;
    c.words.forEach((w, j) => {
      if (writes && j >= k + keep) out.written.push(w.value);
      // A substitution runs, so its commands are read; when the word it stands in is
      // text the command only records (`git commit -m "$(cat <<'EOF' … EOF)"`), what it
      // prints is text too, and its own printing commands' arguments may be left out.
      const recorded = keep > 0 && j >= k + keep && !w.procSub;
      for (const s of w.subs) nested.push({ src: s, cwds: new Set(cwds), mayBlank: recorded });
      if (keep > 0 && j >= k + keep) {
        edits.push({ start: w.start, end: w.end, text: "_" });
        return;
      }
      const plain = j > k && k >= 0 ? canonical(w, cwds, home) : null;
      const text = plain ?? stripped(w.value);
      // In `/`, a bare name reads as the folder under `/` it names (`rm -rf etc` is
      // `rm -rf /etc`), but it may be the command a wrapper runs (`sudo rm -rf /` is no
      // `sudo /rm`): a second line keeps it as written.
      const bare = plain !== null && /^[^/~$.*][^/]*$/.test(w.value);
      edits.push({ start: w.start, end: w.end, text, alt: bare ? stripped(w.value) : undefined });
    });
    // A literal body is the command's text; in another, `$(…)` and backticks run, so one
    // holding `$` or a backtick is read as it stands.
    for (const r of c.redirs) {
      const text = r.body && (r.literal || !/[$`]/.test(src.slice(r.body.start, r.body.end)));
      if (r.body && text && keep > 0) {
        edits.push({ start: r.body.start, end: r.body.end, text: "" });
        if (writes) out.written.push(src.slice(r.body.start, r.body.end));
      }
    }

    // Commands another runs: `sh -c STRING`, `su -c STRING`, `eval WORDS`.
    const run = new Set<WordTok>();
    for (let j = Math.max(k, 0); j < c.words.length; j++) {
      const n = basename(plainName(c.words[j]) ?? "");
      if (SHELLS.test(n) || n === "su" || n === "runuser") {
        let m = j + 1;
        let dashC = false;
        while (m < c.words.length && /^[-+]/.test(c.words[m]?.value ?? "")) {
          const opt = c.words[m]?.value ?? "";
          if (/^-[A-Za-z]*c[A-Za-z]*$/.test(opt) || opt === "--command") dashC = true;
          m++;
          if (dashC) break;
        }
        const str = c.words[m];
        if (dashC && str) {
          nested.push({ src: str.value, cwds: new Set(cwds), mayBlank: true });
          run.add(str);
        }
      }
    }
    // A quoted string holding a command line, or a value after `key=`, `-O` or `!`
    // (`ssh host "…"`, `git -c core.pager="…"`, `git grep -O'…'`), is read as a command
    // too: it may run, and its first word then starts a command. Text that is no shell
    // syntax (an apostrophe in prose) adds no line; the words are matched as they are.
    c.words.forEach((w, j) => {
      if ((keep > 0 && j >= k + keep) || run.has(w) || (name === "eval" && j > k) || !/\s/.test(w.value)) return;
      const after = /^(?:[^=\s]*=|-[A-Za-z])!?(.*)$/s.exec(w.value);
      nested.push({ src: after?.[1] || w.value, cwds: new Set(cwds), mayBlank: false, optional: true });
    });
    if (name === "eval" && k >= 0) {
      nested.push({ src: c.words.slice(k + 1).map((w) => w.value).join(" "), cwds: new Set(cwds), mayBlank: true });
    }

    // Where the next commands run: `cd DIR &&` moves them; after `;`, `||`, `|` or a
    // subshell's end the cd may have failed or not applied, so either folder is possible.
    if (k >= 0 && (name === "cd" || name === "pushd" || name === "popd")) {
      const args = c.words.slice(k + 1).filter((w) => !/^-[LPe@]+$/.test(w.value));
      const arg = args[0];
      let dest: string | null;
      if (name === "popd") dest = null;
      else if (!arg) dest = home.startsWith("/") ? home : null;
      else {
        let v = arg.value;
        if (home.startsWith("/")) v = v.replace(/^(?:\$HOME|\$\{HOME\}|~)(?=$|\/)/, home);
        if (v === "-" || arg.subs.length > 0 || /[$`*?[]/.test(v) || v.startsWith("~")) dest = null;
        else if (v.startsWith("/")) dest = resolve(v);
        else {
          const known = [...cwds].filter((x): x is string => x !== null);
          dest = known.length === 1 && known[0] ? resolve(known[0], v) : null;
        }
      }
      if (c.after === "&&") cwds = new Set([dest]);
      else cwds.add(dest);
    }
  }

  // Comments never run; they are left out where arguments may be.
  if (blankable) for (const t of toks) if (t.kind === "comment") edits.push({ start: t.start, end: t.end, text: "" });

  edits.sort((a, b) => a.start - b.start);
  const viewOf = (alt: boolean): string => {
    let view = "";
    let at = 0;
    for (const e of edits) {
      if (e.start < at) continue;
      view += src.slice(at, e.start) + (alt && e.alt !== undefined ? e.alt : e.text);
      at = e.end;
    }
    return view + src.slice(at);
  };
  const views = edits.some((e) => e.alt !== undefined) ? [viewOf(false), viewOf(true)] : [viewOf(false)];
  for (const view of views) {
    out.lines.push(view);
    out.size += view.length;
  }
  // `X="rm -rf /"; $X`: a command word known only at run time may be any value assigned.
  // `a=rm; $a -rf /`: or the value is the command word, and the arguments follow it.
  if (computedCommand) {
    for (const v of assigned) {
      nested.push({ src: v, cwds: new Set(cwdsIn), mayBlank: false, optional: true });
      for (const args of computedArgs) {
        if (args !== "") nested.push({ src: `${v} ${args}`, cwds: new Set(cwdsIn), mayBlank: false, optional: true });
      }
    }
  }
  for (const n of nested) {
    if (!n.optional) {
      analyse(n.src, n.cwds, home, depth + 1, n.mayBlank, out);
      continue;
    }
    if (out.size + n.src.length > OPTIONAL_BUDGET) continue;
    const [lines, size] = [out.lines.length, out.size];
    try {
      analyse(n.src, n.cwds, home, depth + 1, n.mayBlank, out);
    } catch (err) {
      if (!(err instanceof ShellSyntax)) throw err;
      out.lines.length = lines;
      out.size = size;
    }
  }
}

/** What a command runs, as rules are matched against it (see the top of this file). */
export interface RunView {
  /** The command as it runs, text it only prints or records left out. */
  view: string;
  /** Of that text, what it writes to files (a script run later, perhaps), one per line. */
  written: string;
}

/**
 * The views of `command` rules are matched against, or null when the command cannot be
 * read as a shell would read it.
 */
export function runView(command: string, cwd: string, home: string): RunView | null {
  const out: Analysis = { lines: [], size: 0, written: [] };
  try {
    analyse(command, new Set([cwd]), home.replace(/(.)\/+$/, "$1"), 0, true, out);
  } catch (err) {
    if (err instanceof ShellSyntax) return null;
    throw err;
  }
  return { view: out.lines.join("\n"), written: out.written.join("\n") };
}
