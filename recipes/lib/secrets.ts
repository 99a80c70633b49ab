// Credential detectors shared by secret-guard (deny) and audit-log (redact).
// Each detector names a *kind* of secret; callers report the kind and where
// it was found, never the matched text itself.

/**
 * Where the scanned text goes. Without it (audit-log's redaction) every detector runs at
 * its strictest; secret-guard passes it so that local-development and test values pass.
 */
export interface SecretContext {
  /** The file the text is written to, relative to the workspace when it is inside it. */
  path?: string;
  /** The text is a shell command: an unquoted value ends at `&`, and its targets are looked at. */
  shell?: boolean;
}

/** A scan of one text: the text and what its context says. */
interface Scan {
  text: string;
  shell: boolean;
  /** A docker-compose or dev-container file (not one named for production). */
  devFile: boolean;
  /** A file under test/, tests/, __tests__, spec/, fixtures/ …, or named *.test.* / *.spec.* / *_test.* . */
  testFile: boolean;
  /** `text` with `\`-continued lines joined (same length), made when first needed. */
  joined?: string;
  /** The last command segment `localCommandAt` judged (matches come in order). */
  segment?: { start: number; end: number; local: boolean };
  /** Whether the command runs a remote login anywhere (`runsRemoteLogin`), once known. */
  remoteLogin?: boolean;
}

export interface SecretDetector {
  kind: string;
  pattern: RegExp; // must carry the "g" flag (used with matchAll / replace)
  /** Used instead of `pattern` when the text is a shell command. */
  shellPattern?: RegExp;
  /** Extra check on the match, to cut false positives. */
  accept?: (match: RegExpMatchArray, scan: Scan) => boolean;
  /**
   * For `key = value` detectors: the span is only the value, found as the
   * match's tail minus the closing quote (`quoteGroup`). Redaction then keeps
   * the key name readable.
   */
  value?: { group: number; quoteGroup: number };
}

export interface SecretHit {
  kind: string;
  index: number;
  length: number;
}

// Values that are obviously not real secrets: references to the environment
// or config, template placeholders, masked values.
function isPlaceholderValue(value: string, quoted: boolean): boolean {
  const v = value.replace(/^["'`]|["'`]$/g, "");
  // Unquoted, a name made of words (hashedPassword, api_key_from_env, AuthTokenService) is
  // a variable in code; generated secrets nearly always hold a digit.
  if (!quoted && /^[A-Za-z_$][A-Za-z_$]*$/.test(v) && /[a-z][A-Z]|_[A-Za-z]|^[A-Z][a-z]/.test(v)) return true;
  if (/^(?:\$|%|<|\{\{|\$\{|process\.env|os\.environ|os\.getenv|getenv|ENV\[|env\()/i.test(v)) return true;
  if (/[()[\]]/.test(v)) return true; // a call or subscript: read_password(), ids[0]
  if (!quoted && /^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$/.test(v)) return true; // snake_case name: page_token_abc123
  if (/^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$/.test(v)) return true; // config.db.password
  if (/^(.)\1+$/.test(v)) return true; // ************, xxxxxxxxxxxx
  if (/^(?:\/|\.{1,2}\/|~\/)/.test(v)) return true; // a file path (password_file=/run/secrets/db)
  if (/example|placeholder|changeme|change_me|redacted|your[_-]|dummy|sample/i.test(v)) return true;
  // A word of the value starting with test / fake / mock (test-token-123456, fake_secret_1,
  // mockApiKey1, myTestPassword), not the inside of another word (Contest2024, latest).
  if (/(?:^|[^A-Za-z])(?:[Tt]est|[Ff]ake|[Mm]ock|TEST|FAKE|MOCK)|[a-z](?:Test|Fake|Mock)/.test(v)) return true;
  return false;
}

/**
 * True for a value that looks generated rather than typed by a person: 32+ characters, or
 * 4+ switches between lower case, upper case, digits and symbols inside its words
 * (`8f2a9c1e…`, `kT9vX2mQ8r`, `S3cretPassw0rd9`, `Tr0ub4dor&3xyz!`). A capitalised word
 * (`Password`, `Dev`) counts as lower case and `-`, `_`, `.` separate words, so the
 * passwords people type for a local database or a test (`devpassword123`,
 * `my-secret-pw`, `Password123!`, `admin123`) are not random-looking.
 */
export function looksRandom(value: string): boolean {
  if (value.length >= 32) return true;
  let switches = 0;
  for (const word of value.replace(/[A-Z][a-z]{2,}/g, (w) => w.toLowerCase()).split(/[-_.]+/)) {
    let prev = "";
    for (const ch of word) {
      const cls = /[a-z]/.test(ch) ? "l" : /[A-Z]/.test(ch) ? "u" : /\d/.test(ch) ? "d" : "s";
      if (prev !== "" && cls !== prev) switches++;
      prev = cls;
    }
  }
  return switches >= 4;
}

/** Loopback names: `localhost` (and `*.localhost`), `127.…`, `[::1]`, `0.0.0.0`, `host.docker.internal`. */
function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/:\d+$/, "");
  return /^(?:localhost|[\w-]+\.localhost|127(?:\.\d{1,3}){3}|\[::1\]|::1|0\.0\.0\.0|host\.docker\.internal)$/.test(h);
}

/**
 * True when the shell command around `index` (the part between `;`, `|`, `&&` or line
 * ends, with `\`-continued lines joined) runs on this machine: every host it names (URLs,
 * `-h`/`--host` values, bare `localhost:port`) is a loopback name, and it names one or is
 * a `docker run` / `create` / `exec` or `docker compose` call (not one aimed elsewhere
 * with `-H`, `--host`, `--context` or `DOCKER_HOST=`).
 */
function localCommandAt(scan: Scan, index: number): boolean {
  scan.joined ??= scan.text.replace(/\\\r?\n/g, (c) => " ".repeat(c.length));
  const joined = scan.joined;
  const last = scan.segment;
  if (last && index >= last.start && index < last.end) return last.local;
  let start = index;
  while (start > 0 && !/[;|\n]/.test(joined[start - 1] ?? "") && !joined.startsWith("&&", start - 2)) start--;
  let end = index;
  while (end < joined.length && !/[;|\n]/.test(joined[end] ?? "") && !joined.startsWith("&&", end)) end++;
  // A remote login anywhere in it (see `runsRemoteLogin`), read with `\`-continued lines
  // joined as the shell joins them (`ss\<newline>h` is `ssh`).
  scan.remoteLogin ??= runsRemoteLogin(scan.text.replace(/\\\r?\n/g, ""));
  const local = !scan.remoteLogin && segmentIsLocal(joined.slice(start, end), joined);
  scan.segment = { start, end, local };
  return local;
}

/** The words of a shell command line as the shell splits them, quotes removed. */
function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] ?? "";
    if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      const stop = end < 0 ? line.length : end;
      word = (word ?? "") + line.slice(i + 1, stop);
      i = stop;
    } else if (c === '"') {
      let j = i + 1;
      let text = "";
      while (j < line.length && line[j] !== '"') {
        text += line[j] === "\\" && j + 1 < line.length ? line[++j] : line[j];
        j++;
      }
      word = (word ?? "") + text;
      i = j;
    } else if (c === "\\" && i + 1 < line.length) {
      word = (word ?? "") + line[++i];
    } else {
      word = (word ?? "") + c;
    }
  }
  if (word !== null) words.push(word);
  return words;
}

/** curl options that take a value (the next word is no URL). */
const CURL_VALUE_OPTION =
  /^(?:-[A-Za-z]*[odHuxeATFbcKwXmrEUQzCyY]|--(?:data[\w-]*|header|user|output|request|max-time|connect-timeout|retry[\w-]*|form[\w-]*|cookie[\w-]*|user-agent|referer|cert[\w-]*|key[\w-]*|cacert|capath|proxy[\w-]*|resolve|connect-to|upload-file|write-out|range|config|limit-rate|interface|dns-servers|oauth2-bearer|url))$/;

/**
 * Whether every URL a curl command in `segment` is given (each word after `curl` that is
 * no option nor an option's value: curl takes a bare word for a URL) names a loopback
 * host. A word it cannot read as one (`3405803785`, `evil.example?`) is not local.
 */
function curlTargetsAreLocal(segment: string): boolean {
  const words = shellWords(segment.slice(segment.search(/\bcurl\b/))).slice(1);
  for (let i = 0; i < words.length; i++) {
    const w = words[i] ?? "";
    if (w === "") continue;
    // A redirection (`> out.json`, `2>/dev/null`), and its target when apart.
    if (/^\d*(?:>>?|<|&>)/.test(w)) {
      if (/^\d*(?:>>?|<|&>)$/.test(w)) i++;
      continue;
    }
    if (w.startsWith("-")) {
      if (CURL_VALUE_OPTION.test(w) && !w.includes("=")) i++;
      continue;
    }
    const host = /^(?:[a-z][a-z0-9+.-]*:\/\/)?(?:[^\s/@]*@)?(\[[^\]]*\]|[^/:?#]*)/i.exec(w)?.[1] ?? "";
    if (!isLoopbackHost(host)) return false;
  }
  return true;
}

/**
 * Programs that log in to another machine (over ssh, or as ssh does), run commands there,
 * or forward a local port to it (or send a program's connections through a proxy, as
 * `proxychains` does). Which machine they reach is not told by their words: `-J`, `-o
 * HostName=`, `ProxyCommand`, `~/.ssh/config` aliases and `rsync -e` send
 * `tester@localhost` elsewhere; `kubectl exec` runs in a cluster; `ssh -L`, `kubectl
 * port-forward`, `socat` and the cloud proxies make `127.0.0.1:3306` another machine's
 * database. `rsync` and `aws` count only as `runsRemoteLogin` says.
 */
const REMOTE_LOGIN = new Set([
  "ssh", "scp", "sftp", "rsync", "sshpass", "ssh-copy-id", "mosh", "autossh", "pssh",
  "parallel-ssh", "pdsh", "sshfs", "plink", "pscp", "dbclient", "ansible", "ansible-playbook",
  "sshuttle", "telnet", "rsh", "rlogin", "kubectl", "oc", "gcloud", "az", "aws", "heroku",
  "flyctl", "socat", "stunnel", "ngrok", "cloud-sql-proxy", "cloud_sql_proxy", "tsh",
  "chisel", "proxychains", "proxychains4", "torsocks", "tsocks", "torify",
]);

/**
 * The simple commands of `command`: cut at each `;`, `&`, `|`, `(`, `)`, backtick and line
 * end outside quotes, quotes left in.
 */
function simpleCommands(command: string): string[] {
  const out: string[] = [];
  let quote = "";
  let start = 0;
  for (let i = 0; i < command.length; i++) {
    const c = command[i] ?? "";
    if (quote !== "") {
      if (c === "\\" && quote === '"') i++;
      else if (c === quote) quote = "";
    } else if (c === "\\") {
      i++;
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if (/[;&|()`\n]/.test(c)) {
      out.push(command.slice(start, i));
      start = i + 1;
    }
  }
  out.push(command.slice(start));
  return out;
}

/**
 * Whether `command` names one of `REMOTE_LOGIN` anywhere: as a word, a path's last part
 * (`/usr/bin/ssh`), inside quotes (`bash -c 'ssh -L …'`), after `=` (`-o
 * ProxyCommand=ssh`) or as another program's subcommand (`vagrant ssh`, `gh codespace
 * ssh`). Not only where a program starts: shell keywords, wrappers (`sudo -n`, `timeout
 * 1m`, `xargs -I {}`, `flock FILE`), redirections and functions put it anywhere, and a
 * quoted command handed on (`tmux new 'ssh …'`) looks like text. So a name written as
 * text counts as well (`git commit -m "ssh keys"` beside a local password): the password
 * is then denied, the safe side. `rsync` counts in a simple command that gives it a
 * remote path (`host:path`, `rsync://`) or a remote shell (`-e`, `--rsh`), so a local
 * copy (`rsync -a dist/ public/`) does not; `aws` beside `ssm` (its sessions and port
 * forwards). The tunnel may be opened by another part of the command (`ssh -L
 * 3306:127.0.0.1:3306 prod && mysql -h 127.0.0.1 …`), and quotes are not told from a
 * second command (`ssh prod 'cd /srv && mysql -h 127.0.0.1 …'`): the whole command is
 * read.
 */
/**
 * Whether the simple command `piece` runs rsync with a remote path (`host:path`,
 * `rsync://…`) or a remote shell (`-e`, `--rsh`) among the words after it, also in a
 * quoted command handed on (`bash -c 'rsync -a x host:/y'`).
 */
function rsyncIsRemote(piece: string, depth = 0): boolean {
  const words = shellWords(piece);
  const at = words.findIndex((w) => !w.includes(":") && w.slice(w.lastIndexOf("/") + 1) === "rsync");
  const remote = (w: string) => /^(?:-e|--rsh\b)/.test(w) || (!w.startsWith("-") && w.includes(":"));
  if (at >= 0 && words.slice(at + 1).some(remote)) return true;
  const handedOn = words.filter((w) => /\s/.test(w) && /\brsync\b/.test(w));
  return depth < 3 && handedOn.some((w) => simpleCommands(w).some((p) => rsyncIsRemote(p, depth + 1)));
}

function runsRemoteLogin(command: string): boolean {
  for (const piece of simpleCommands(command)) {
    // Words and the parts of words (`-oProxyCommand=ssh`, `${SSH:-ssh}`, `/usr/bin/ssh`).
    const tokens = piece
      .split(/[\s;&|()<>`'"{}!$=,:\\]+/)
      .map((t) => t.slice(t.lastIndexOf("/") + 1).replace(/^-+/, ""));
    for (const t of tokens) {
      if (!REMOTE_LOGIN.has(t)) continue;
      if (t === "rsync") {
        if (rsyncIsRemote(piece)) return true;
      } else if (t === "aws") {
        if (tokens.includes("ssm")) return true;
      } else {
        return true;
      }
    }
  }
  return false;
}

function segmentIsLocal(segment: string, whole: string): boolean {
  // A `#` may start a comment that names a host the command never talks to (`… evil.to
  // # localhost`), or stand inside a quoted word: either way it cannot be told, so no.
  if (/(?:^|\s)#/.test(segment)) return false;
  // A client's server from a variable (`MYSQL_HOST=10.1.2.3 mysql …`), or a docker
  // context switched to another daemon.
  if (/\b\w*_HOST=|\bdocker\s+context\b/.test(whole)) return false;
  if (/\bcurl\b/.test(segment) && !curlTargetsAreLocal(segment)) return false;
  const docker = /\b(?:docker|podman|nerdctl)\b/.test(segment);
  // Aimed at another daemon, here or by a variable set anywhere in the command.
  if (docker && /\s(?:-H|--host|--context)[\s=]/.test(segment)) return false;
  if (docker && /\bDOCKER_(?:HOST|CONTEXT)=/.test(whole)) return false;
  // Sent through a proxy, or to an address other than the one named.
  if (/\s(?:-x|--proxy|--preproxy|--socks\w*|--resolve|--connect-to)[\s=]/.test(segment)) return false;
  const hosts: string[] = [];
  for (const m of segment.matchAll(/\b[a-z][a-z0-9+.-]{1,20}:\/\/(?:[^\s/@"'`]*@)?(\[[^\]\s]*\]|[^\s/:?#"'`]+)/gi)) hosts.push(m[1] ?? "");
  // `-h`/`--host` (and prefixes such as mysql's `--hos=`). In `docker run`/`create`, a `-h`
  // before the program the container runs names the container, not a server; `docker
  // exec` has no `-h` of its own.
  const client = /\s(?:mysql\w*|psql|pg_\w+|redis-cli|mongo\w*|curl|wget|sqlcmd|clickhouse-client)\b/.exec(segment);
  const containerOptionsEnd = docker && /\s(?:run|create)\b/.test(segment) ? (client?.index ?? segment.length) : 0;
  for (const m of segment.matchAll(/\s(?:-h\s*|--ho\w*[=\s]+)["']?([^\s"';|&]+)/g)) {
    const host = m[1] ?? "";
    if ((m.index ?? 0) < containerOptionsEnd && !host.includes("$")) continue;
    hosts.push(host);
  }
  for (const m of segment.matchAll(/(?:^|[\s"'=])((?:localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0)(?::\d+)?)(?=$|[\s/"'])/g)) hosts.push(m[1] ?? "");
  // A host named without a scheme (`curl -u u:p evil.example`, `… 203.0.113.7`): a bare
  // address, or a bare dotted name whose last part is no common file extension (a file
  // name such as `out.html` or `setup.sh` is none; a domain under `.sh` is taken for one).
  const bare = /(?:^|\s)["']?((?:\d{1,3}\.){3}\d{1,3}(?::\d+)?|(?:[a-z0-9-]+\.)+[a-z][a-z0-9-]*(?::\d+)?)["']?(?=$|[\s/?#])/gi;
  const FILE_EXTENSION =
    /\.(?:html?|json|txt|md|sh|bash|js|mjs|cjs|ts|py|rb|go|rs|java|ya?ml|xml|csv|tsv|log|gz|tgz|zip|tar|bz2|xz|png|jpe?g|gif|svg|pdf|sql|env|conf|cfg|ini|lock|toml|out|bin|pem|crt|key|pub|cert|der|p12|db|sqlite3?|bak|tmp|dump)(?::\d+)?$/i;
  for (const m of segment.matchAll(bare)) {
    const host = m[1] ?? "";
    if (!FILE_EXTENSION.test(host)) hosts.push(host);
  }
  if (!hosts.every(isLoopbackHost)) return false;
  const container = /\b(?:docker|podman|nerdctl)(?:\s+container)?\s+(?:run|create|exec)\b|\b(?:docker\s+compose|docker-compose|podman-compose)\b/;
  return hosts.length > 0 || container.test(segment);
}

/**
 * A value that generic detectors let through for where it is written: one that does not
 * look random (`looksRandom`), in a test file, or - for a password - in a
 * docker-compose / dev-container file or a command that only talks to this machine.
 */
function devOrTestValue(value: string, scan: Scan, index: number, password: boolean): boolean {
  if (looksRandom(value)) return false;
  if (scan.testFile) return true;
  return password && (scan.devFile || (scan.shell && localCommandAt(scan, index)));
}

/** docker-compose.yml, compose.dev.yaml, .devcontainer/… - but not a compose file named for production. */
function isDevFile(path: string): boolean {
  const p = path.replace(/\\/g, "/");
  const name = p.slice(p.lastIndexOf("/") + 1).toLowerCase();
  if (/(?:^|\/)\.devcontainer\//i.test(p)) return true;
  // Named for production anywhere: the file (`compose.prod_eu.yml`), or a folder on its way
  // (`deploy/prod/docker-compose.yml`).
  const production = /(?:^|[/._-])(?:prod|prd|production|staging|stage|live|release)(?:\d*)(?=[/._-]|$)/i;
  return /^(?:docker-)?compose(?:[.-][\w.-]+)?\.ya?ml$/.test(name) && !production.test(p);
}

/** Files of a test suite: under test/, tests/, __tests__/, spec/, fixtures/ …, or named like a test. */
function isTestFile(path: string): boolean {
  const p = path.replace(/\\/g, "/");
  const name = p.slice(p.lastIndexOf("/") + 1);
  return (
    /(?:^|\/)(?:test|tests|__tests__|spec|specs|fixtures|__fixtures__|__mocks__|testdata)\//i.test(p) ||
    /\.(?:test|spec)\.[\w]+$|_test\.[\w]+$|^test_[\w.-]+\.py$/i.test(name)
  );
}

/** Keys whose value is not a credential: pagination cursors and CSRF tokens. */
const NOT_A_CREDENTIAL_KEY = /(?:page|next|continuation|cursor|sync|csrf|xsrf)[_-]?token$|^csrfmiddlewaretoken$/i;

/** Passwords every tutorial uses, which protect nothing. */
const STOCK_PASSWORD = /^(?:password|passw0rd|postgres|root|admin|secret|test|dev|example|changeme)$/i;

function hasLetterAndDigit(s: string): boolean {
  return /[A-Za-z]/.test(s) && /\d/.test(s);
}

/**
 * Hyphenated words (`1234-fix-login-redirect-loop`, `button-primary-large-2xl`): a branch
 * name or a CSS class, not a generated key, whose parts are never two lowercase words.
 */
function isWordChain(s: string): boolean {
  return s.split("-").filter((part) => /^[a-z]{2,}$/.test(part)).length >= 2;
}

export const SECRET_DETECTORS: SecretDetector[] = [
  {
    kind: "PEM private key",
    // A header followed by a key body: a line (real or `\n`-escaped, or the next item of a
    // JSON array, after blank lines, quotes, `+` patch marks or string concatenation, and
    // `Proc-Type:` / `DEK-Info:` / `Version:` lines) that is a run of 12+ base64
    // characters (a key may be wrapped that narrow), or 40+ of them on the
    // header's own line. A bare header (`s.includes("-----BEGIN PRIVATE KEY-----")`, or
    // one named in docs) is not a key. The body is part of the span so that redaction
    // removes it too.
    pattern:
      /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:(?:(?:[ \t"'`+,]*(?:\r?\n|(?:\\r)?\\n)|["'`][ \t]*,\s*)(?:[ \t"'`+]*[A-Za-z][\w-]*: [^\r\n\\]*)?){1,8}[ \t"'`+]*[A-Za-z0-9+/]{12,}={0,2}(?=[ \t]*(?:["'`,;+]|\r?\n|(?:\\r)?\\n|$))|[ \t]+[A-Za-z0-9+/]{40})[\s\S]*?(?:-----END [A-Z0-9 ]*-----|$)/g,
  },
  {
    kind: "AWS access key id",
    pattern: /\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b/g,
    // AWS's documentation keys (AKIAIOSFODNN7EXAMPLE, …) are fine in docs and tests.
    accept: (m) => !m[0].endsWith("EXAMPLE"),
  },
  {
    kind: "AWS secret access key",
    // `aws_secret_access_key = …`, `AWS_SECRET_ACCESS_KEY: …` and
    // `aws configure set aws_secret_access_key …` (separated by spaces).
    pattern: /\baws_secret_access_key\b["']?(?:\s*[:=]\s*|\s+)["']?[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])/gi,
    accept: (m) => !/EXAMPLEKEY/.test(m[0]),
  },
  {
    kind: "GitHub token",
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b/g,
  },
  {
    kind: "Slack token",
    pattern: /\bxox[abposre]-[A-Za-z0-9-]{10,}|\bxapp-\d-[A-Za-z0-9-]{10,}/g,
  },
  {
    kind: "Slack webhook URL",
    pattern: /https:\/\/hooks\.slack\.com\/services\/T[A-Za-z0-9_]+\/B[A-Za-z0-9_]+\/[A-Za-z0-9_]+/g,
  },
  {
    kind: "OpenAI-style sk- API key",
    pattern: /\bsk-(?:proj-|ant-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g,
    accept: (m) => {
      const body = m[0].replace(/^sk-(?:proj-|ant-|svcacct-|admin-)?/, "");
      return hasLetterAndDigit(body) && !isWordChain(body);
    },
  },
  {
    kind: "Stripe secret key",
    pattern: /\b[rs]k_live_[A-Za-z0-9]{20,}\b/g,
  },
  {
    kind: "Google API key",
    pattern: /\bAIza[0-9A-Za-z_-]{35}\b/g,
  },
  {
    kind: "GitLab, npm or Hugging Face token",
    pattern: /\b(?:glpat-[A-Za-z0-9_-]{20,}|npm_[A-Za-z0-9]{36}|hf_[A-Za-z0-9]{30,})\b/g,
  },
  {
    kind: "JSON Web Token",
    // Bounded, so that a long run of look-alike text stays linear.
    pattern: /\beyJ[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,8192}\.[A-Za-z0-9_-]{16,1024}/g,
    // jwt.io's sample token, found in docs and test fixtures everywhere.
    accept: (m) => !m[0].endsWith("SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"),
  },
  {
    kind: "credential in an Authorization header",
    // `Authorization: Bearer …` (curl -H, a fetch call, a config file), the two-argument
    // calls `req.Header.Set("Authorization", "Bearer …")`, `.set('Authorization', …)` and
    // `headers["Authorization"] = …`, with a literal token; one read from a variable
    // (`Bearer $TOKEN`, `${token}`, `"Bearer " + token`) is fine, and so is a test token
    // (`test-token-123456`, or one that does not look random in a test file).
    pattern:
      /\bAuthorization\\?["'`]?\]?\s*(?:[:=,]|=>)\s*\\?["'`]?(?:Bearer|Basic|token|Token|Bot)\s+()([A-Za-z0-9._~+/=-]{16,})/gi,
    accept: (m, scan) => {
      const token = m[2] ?? "";
      return hasLetterAndDigit(token) && !isPlaceholderValue(token, true) && !devOrTestValue(token, scan, m.index ?? 0, false);
    },
    value: { group: 2, quoteGroup: 1 },
  },
  {
    kind: "password on a command line",
    // `curl -u user:password` (or `--user`); one from a variable (`-u "$USER:$PASS"`) is fine.
    // Against a loopback host (`http://localhost:8080`), a password that does not look
    // random (`admin:admin123`) is a local development one.
    pattern: /\bcurl\b[^\n;&|]*?\s(?:-u|--user)[\s=]+(["']?)[^\s:"'$]{1,64}:([^\s"'$@]{6,128})\1/g,
    accept: (m, scan) => {
      const password = m[2] ?? "";
      return !isPlaceholderValue(password, true) && !STOCK_PASSWORD.test(password) && !devOrTestValue(password, scan, m.index ?? 0, true);
    },
    value: { group: 2, quoteGroup: 1 },
  },
  {
    kind: "password on a command line",
    // `mysql -pPASSWORD`, `-p'PASS;WORD'` (the password glued to -p, quoted or not);
    // `mysql -p` alone prompts for it, and `-p"$MYSQL_PWD"` reads a variable.
    // Against `-h 127.0.0.1` / `localhost`, or in `docker exec`, a password that does not
    // look random is a local development one.
    pattern: /\bmysql(?:dump|admin)?\b[^\n;&|]*?\s-p(["']?)([^\s"'$-][^\s"']{5,127})\1/g,
    accept: (m, scan) => {
      const password = m[2] ?? "";
      return !isPlaceholderValue(password, true) && !STOCK_PASSWORD.test(password) && !devOrTestValue(password, scan, m.index ?? 0, true);
    },
    value: { group: 2, quoteGroup: 1 },
  },
  {
    kind: "password on a command line",
    // A password or token given as its own argument: `redis-cli -a PASS` (`--pass`),
    // `docker login -p PASS` (`--password`; `--password-stdin` reads it), `sshpass -p PASS`,
    // `curl --oauth2-bearer TOKEN`, `gh secret set NAME --body VALUE` (`-b`). A variable,
    // a placeholder or a stock password is fine; for redis-cli and sshpass to this
    // machine, a password that does not look random is a local development one.
    pattern:
      /\b(redis-cli|(?:docker|podman|nerdctl)\s+login|sshpass|curl|gh\s+secret\s+set)\b[^\n;&|]*?\s(-a|--pass|-p|--password|--oauth2-bearer|-b|--body)(?:[ \t]+|=)(["']?)([^\s"'$-][^\s"']{5,127})\3(?=$|[\s;&|)])/g,
    accept: (m, scan) => {
      const [program, flag] = [m[1] ?? "", m[2] ?? ""];
      // Each program's own flag: `-a` is redis-cli's, `-b` gh's, `--oauth2-bearer` curl's.
      const mine: Record<string, RegExp> = {
        "redis-cli": /^(?:-a|--pass)$/,
        sshpass: /^-p$/,
        curl: /^--oauth2-bearer$/,
      };
      const key = /^(?:docker|podman|nerdctl)/.test(program) ? "login" : program.startsWith("gh") ? "gh" : program;
      const flags = mine[key] ?? (key === "login" ? /^(?:-p|--password)$/ : /^(?:-b|--body)$/);
      if (!flags.test(flag)) return false;
      const value = m[4] ?? "";
      const password = key === "redis-cli" || key === "sshpass";
      return !isPlaceholderValue(value, true) && !STOCK_PASSWORD.test(value) && !devOrTestValue(value, scan, m.index ?? 0, password);
    },
    value: { group: 4, quoteGroup: 3 },
  },
  {
    kind: "password in a URL",
    // scheme://user:password@host, also with no user (`redis://:password@host`); the span
    // is the password. Local development URLs (localhost, a compose service name without
    // a dot) and stock passwords (postgres:postgres, :password@) are not secrets anyone
    // can use.
    pattern: /\b[a-z][a-z0-9+.-]{1,20}:\/\/([^\s/:@"'`]{0,64}):()([^\s/@"'`]{6,128})(?=@([^\s/:?#"'`]{1,253}))/gi,
    accept: (m, scan) => {
      const [user, password, host] = [m[1] ?? "", m[3] ?? "", (m[4] ?? "").toLowerCase()];
      const local = host === "localhost" || host.startsWith("127.") || host.startsWith("[::1]") || !host.includes(".");
      const stock = password === user || STOCK_PASSWORD.test(password);
      return !local && !stock && !isPlaceholderValue(password, true) && !devOrTestValue(password, scan, m.index ?? 0, false);
    },
    value: { group: 3, quoteGroup: 2 },
  },
  {
    kind: "password or API key assignment",
    // password=…, DB_PASSWORD=…, api_key: "…", "client_secret": "…" with a
    // value of 12+ chars. The key may carry a prefix (OPENAI_API_KEY), bounded
    // so that long word runs stay linear; `==` comparisons are not assignments.
    // A quoted value may hold `,;&|` (`"k9;Tz&w2|Qx"`); one with a space is taken
    // for prose (`"forgot_password": "Forgot your password?"`). Unquoted, a value in a
    // file holds `&` (`password: Tr0ub4dor&3xyz!`) but not a query string's `&name=`;
    // in a shell command `&` ends it (`shellPattern`).
    pattern: assignment("(?:[^\\s\"'`,;&|]|&(?![\\s&]|[\\w.-]+=|$))"),
    shellPattern: assignment("[^\\s\"'`,;&|]"),
    accept: (m, scan) => {
      const [key, quote, value] = [m[1] ?? "", m[2] ?? "", m[3] ?? ""];
      if (NOT_A_CREDENTIAL_KEY.test(key)) return false; // nextPageToken, csrf_token
      if (isPlaceholderValue(value, quote !== "")) return false;
      return !devOrTestValue(value, scan, m.index ?? 0, /passw(?:or)?d/i.test(key));
    },
    value: { group: 3, quoteGroup: 2 },
  },
];

/**
 * The `key = value` pattern, given what an unquoted value character is: group 1 the key,
 * 2 the opening quote, 3 the value.
 */
function assignment(unquotedChar: string): RegExp {
  return new RegExp(
    "\\b([\\w.-]{0,48}?(?:password|passwd|secret|secret[_-]?key|api[_-]?key|apikey|token|private[_-]?key))" +
      "[\"']?\\s*(?:=(?!=)|:)\\s*([\"'`]?)(" + unquotedChar + "{12,}|(?<=[\"'`])[^\\s\"'`]{12,})\\2",
    "gi",
  );
}

/**
 * All credential-looking spans in `text`. `context` says where the text goes (the file,
 * or a shell command); without it every detector is at its strictest.
 */
export function findSecrets(text: string, context: SecretContext = {}): SecretHit[] {
  const path = context.path ?? "";
  const scan: Scan = {
    text,
    shell: context.shell === true,
    devFile: path !== "" && isDevFile(path),
    testFile: path !== "" && isTestFile(path),
  };
  const hits: SecretHit[] = [];
  for (const d of SECRET_DETECTORS) {
    const pattern = scan.shell && d.shellPattern ? d.shellPattern : d.pattern;
    for (const m of text.matchAll(pattern)) {
      if (d.accept && !d.accept(m, scan)) continue;
      const start = m.index ?? 0;
      if (d.value) {
        const value = m[d.value.group] ?? "";
        const quote = m[d.value.quoteGroup] ?? "";
        hits.push({ kind: d.kind, index: start + m[0].length - quote.length - value.length, length: value.length });
      } else {
        hits.push({ kind: d.kind, index: start, length: m[0].length });
      }
    }
  }
  return hits;
}

/** `text` with every detected credential replaced by `[REDACTED:<kind>]`. */
export function redactSecrets(text: string, context: SecretContext = {}): string {
  // Stable sort: on a tie the more specific detector (listed first) wins.
  const hits = findSecrets(text, context).sort((a, b) => a.index - b.index);
  let out = "";
  let at = 0;
  for (const h of hits) {
    if (h.index < at) continue; // overlapping detectors: keep the first span
    out += `${text.slice(at, h.index)}[REDACTED:${h.kind}]`;
    at = h.index + h.length;
  }
  return out + text.slice(at);
}
