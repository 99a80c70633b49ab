// Credential detectors shared by secret-guard (deny) and audit-log (redact).
// Each detector names a *kind* of secret; callers report the kind and where
// it was found, never the matched text itself.

export interface SecretDetector {
  kind: string;
  pattern: RegExp; // must carry the "g" flag (used with matchAll / replace)
  /** Extra check on the match, to cut false positives. */
  accept?: (match: RegExpMatchArray) => boolean;
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
  return false;
}

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
    // The body is part of the span so that redaction removes it too.
    pattern: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*-----|$)/g,
  },
  {
    kind: "AWS access key id",
    pattern: /\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b/g,
    // AWS's documentation keys (AKIAIOSFODNN7EXAMPLE, …) are fine in docs and tests.
    accept: (m) => !m[0].endsWith("EXAMPLE"),
  },
  {
    kind: "AWS secret access key",
    pattern: /\baws_secret_access_key\b["']?\s*[:=]\s*["']?[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])/gi,
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
    // `Authorization: Bearer …` (curl -H, a fetch call, a config file) with a literal
    // token; one read from a variable (`Bearer $TOKEN`, `${token}`) is fine.
    pattern: /\bAuthorization["']?\s*[:=]\s*["']?(?:Bearer|Basic|token|Token|Bot)\s+()([A-Za-z0-9._~+/=-]{16,})/gi,
    accept: (m) => hasLetterAndDigit(m[2] ?? "") && !isPlaceholderValue(m[2] ?? "", true),
    value: { group: 2, quoteGroup: 1 },
  },
  {
    kind: "password on a command line",
    // `curl -u user:password` (or `--user`); one from a variable (`-u "$USER:$PASS"`) is fine.
    pattern: /\bcurl\b[^\n;&|]*?\s(?:-u|--user)[\s=]+(["']?)[^\s:"'$]{1,64}:([^\s"'$@]{6,128})\1/g,
    accept: (m) => !isPlaceholderValue(m[2] ?? "", true) && !STOCK_PASSWORD.test(m[2] ?? ""),
    value: { group: 2, quoteGroup: 1 },
  },
  {
    kind: "password on a command line",
    // `mysql -pPASSWORD`, `-p'PASS;WORD'` (the password glued to -p, quoted or not);
    // `mysql -p` alone prompts for it, and `-p"$MYSQL_PWD"` reads a variable.
    pattern: /\bmysql(?:dump|admin)?\b[^\n;&|]*?\s-p(["']?)([^\s"'$-][^\s"']{5,127})\1/g,
    accept: (m) => !isPlaceholderValue(m[2] ?? "", true) && !STOCK_PASSWORD.test(m[2] ?? ""),
    value: { group: 2, quoteGroup: 1 },
  },
  {
    kind: "password in a URL",
    // scheme://user:password@host; the span is the password.
    // Local development URLs (localhost, a compose service name without a dot) and stock
    // passwords (postgres:postgres, :password@) are not secrets anyone can use.
    pattern: /\b[a-z][a-z0-9+.-]{1,20}:\/\/([^\s/:@"'`]{1,64}):()([^\s/@"'`]{6,128})(?=@([^\s/:?#"'`]{1,253}))/gi,
    accept: (m) => {
      const [user, password, host] = [m[1] ?? "", m[3] ?? "", (m[4] ?? "").toLowerCase()];
      const local = host === "localhost" || host.startsWith("127.") || host.startsWith("[::1]") || !host.includes(".");
      const stock = password === user || /^(?:password|passw0rd|postgres|root|admin|secret|test|dev|example|changeme)$/i.test(password);
      return !local && !stock && !isPlaceholderValue(password, true);
    },
    value: { group: 3, quoteGroup: 2 },
  },
  {
    kind: "password or API key assignment",
    // password=…, DB_PASSWORD=…, api_key: "…", "client_secret": "…" with a
    // value of 12+ chars. The key may carry a prefix (OPENAI_API_KEY), bounded
    // so that long word runs stay linear; `==` comparisons are not assignments.
    // A quoted value may hold `,;&|` (`"k9;Tz&w2|Qx"`); one with a space is taken
    // for prose (`"forgot_password": "Forgot your password?"`).
    pattern:
      /\b[\w.-]{0,48}?(?:password|passwd|secret|secret[_-]?key|api[_-]?key|apikey|token|private[_-]?key)["']?\s*(?:=(?!=)|:)\s*(["'`]?)([^\s"'`,;&|]{12,}|(?<=["'`])[^\s"'`]{12,})\1/gi,
    accept: (m) => !isPlaceholderValue(m[2] ?? "", (m[1] ?? "") !== ""),
    value: { group: 2, quoteGroup: 1 },
  },
];

/** All credential-looking spans in `text`. */
export function findSecrets(text: string): SecretHit[] {
  const hits: SecretHit[] = [];
  for (const d of SECRET_DETECTORS) {
    for (const m of text.matchAll(d.pattern)) {
      if (d.accept && !d.accept(m)) continue;
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
export function redactSecrets(text: string): string {
  // Stable sort: on a tie the more specific detector (listed first) wins.
  const hits = findSecrets(text).sort((a, b) => a.index - b.index);
  let out = "";
  let at = 0;
  for (const h of hits) {
    if (h.index < at) continue; // overlapping detectors: keep the first span
    out += `${text.slice(at, h.index)}[REDACTED:${h.kind}]`;
    at = h.index + h.length;
  }
  return out + text.slice(at);
}
