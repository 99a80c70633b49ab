//! In-process TypeScript → JavaScript compilation for hook files.
//!
//! hookpack ships hooks as plain ESM that Node 20 runs directly, and we don't
//! want users to need `tsc`, `esbuild` or any Node tooling to build them. So
//! this module parses one `.ts`/`.mts` file with oxc, strips the types,
//! rewrites module specifiers through a caller-supplied function, and prints
//! readable JavaScript.
//!
//! It refuses, with diagnostics rather than output:
//! - files that are not `.ts` or `.mts` (`.tsx`, `.cts`, `.d.ts`, JavaScript):
//!   JSX, CommonJS and declaration files are not hook sources;
//! - any syntax error, and any error oxc's semantic checker or transformer
//!   reports (all diagnostics are returned, each with a 1-based line:column);
//! - sources longer than [`MAX_SOURCE_LEN`] bytes or with brackets nested
//!   deeper than [`MAX_NESTING`]: oxc recurses without a depth limit, so it
//!   runs on a thread whose stack grows with the source, and both limits keep
//!   that stack reasonable;
//! - code nested deeper than node can read (see `nested_deeper_than_node_reads`):
//!   node would fail to load it with a stack overflow before the hook ran;
//! - what oxc would turn into code Node 20 can't run as an ES module:
//!   `import x = require(…)`, `export =`, decorators, a namespace's `export let`
//!   (which oxc compiles to a copy that `N.x` does not follow) and a name one block of
//!   a namespace takes bare from another (oxc does not merge the blocks), syntax that oxc only
//!   lowers by importing its runtime helper package (e.g. `using`), which a
//!   hook has no `node_modules` to load from, and syntax newer than Node 20
//!   that oxc leaves as it is (regular expression modifiers and repeated
//!   group names, `import defer`); regular expression literals are parsed, so
//!   a bad one is an error here.
//!
//! It does not type-check: that is `tsc`'s job, and hooks that are wrong in
//! type-space but valid JavaScript still compile.

use std::{collections::BTreeSet, path::Path, sync::mpsc, thread};

use oxc::{
    allocator::Allocator,
    ast::{
        ast::{
            AccessorProperty, BinaryOperator, Declaration, Decorator, ExportAllDeclaration,
            ExportFromDeclaration, Expression, IdentifierReference, ImportAttributeKey,
            ImportDeclaration, ImportExpression, Program, Statement, StringLiteral,
            TSModuleReference, WithClause,
        },
        builder::AstBuilder,
    },
    ast_visit::{walk_mut, VisitMut},
    codegen::{Codegen, CodegenOptions},
    diagnostics::{OxcDiagnostic, Severity},
    parser::{ParseOptions, Parser},
    semantic::{Semantic, SemanticBuilder},
    span::{SourceType, Span},
    str::Str,
    syntax::es_target::ESTarget,
    transformer::{TransformOptions, Transformer},
};

/// Largest source accepted, in bytes. Hooks are hand-written and small; the
/// limit keeps the compiler thread's stack reservation (4 KiB per source
/// byte) within what any 64-bit machine grants.
pub const MAX_SOURCE_LEN: usize = 1024 * 1024;

/// Deepest bracket nesting (`(`, `[`, `{`) accepted.
///
/// Not what keeps oxc from overflowing the stack (a stack sized by source
/// length does that), but it refuses the classic pathological input (thousands of nested brackets)
/// with a clear message instead of compiling it with hundreds of megabytes of
/// stack. Real code stays far below this.
pub const MAX_NESTING: usize = 1_000;

/// Deepest syntax tree accepted, in levels (see `nested_deeper_than_node_reads`): node
/// reads about 1,050 nested arrow functions, each one level, so this leaves a third of its
/// stack to spare.
pub const MAX_SYNTAX_DEPTH: usize = 700;

/// Most tabs of indentation the printed output of one file may hold, estimated before
/// compiling, from the depth of each printed line: about 16 MiB. Real code holds a few hundred
/// thousand.
pub const MAX_INDENTATION: usize = 16 * 1024 * 1024;

/// Stack reserved for the compiler thread per byte of source.
///
/// oxc 0.146 recurses (in the parser, semantic builder, transformer and code
/// generator) once or more per nesting level, with no depth limit of its own:
/// 100,000 nested parentheses abort the whole process with a stack overflow.
/// Nesting depth can't exceed the source length, so a stack proportional to
/// it is always enough. Measured over ~45 nesting shapes, the worst cost is
/// 2.2 KiB per source byte in a debug build (nested tuple types) and 0.9 KiB in
/// release; 4 KiB leaves room for shapes we didn't try.
const STACK_PER_SOURCE_BYTE: usize = 4 * 1024;

/// Stack for the non-recursive part of the pipeline, with ample room.
const BASE_STACK: usize = 32 * 1024 * 1024;

/// Node 20's built-in modules and their exports, from `tools/node20-builtins.mjs`.
const NODE_BUILTINS_TABLE: &str = include_str!("node20_builtins.txt");

/// One built-in module of Node 20.
struct Builtin {
    /// Its name, without `node:` (`fs`, `fs/promises`, `test`).
    name: &'static str,
    /// Only `node:` reaches it (`node:test`).
    prefix_only: bool,
    /// The names `import { … }` may take from it, or `None` where they vary with how node
    /// was started (`process`).
    exports: Option<BTreeSet<&'static str>>,
}

/// Node 20's built-in modules, read once from [`NODE_BUILTINS_TABLE`].
fn builtins() -> &'static [Builtin] {
    static TABLE: std::sync::OnceLock<Vec<Builtin>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        NODE_BUILTINS_TABLE
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|line| {
                let mut words = line.split_ascii_whitespace();
                let first = words.next().unwrap_or_default();
                let exports: BTreeSet<&str> = words.collect();
                Builtin {
                    name: first.strip_prefix("node:").unwrap_or(first),
                    prefix_only: first.starts_with("node:"),
                    exports: (!exports.contains("*")).then_some(exports),
                }
            })
            .collect()
    })
}

/// Every name that may follow `node:`.
fn prefixed_builtins() -> impl Iterator<Item = &'static str> {
    builtins().iter().map(|b| b.name)
}

/// Every name that may be imported without `node:`.
fn unprefixed_builtins() -> impl Iterator<Item = &'static str> {
    builtins().iter().filter(|b| !b.prefix_only).map(|b| b.name)
}

/// The built-in module `specifier` names (`fs`, `node:fs`, `node:test`).
fn builtin(specifier: &str) -> Option<&'static Builtin> {
    match specifier.strip_prefix("node:") {
        Some(name) => builtins().iter().find(|b| b.name == name),
        None => builtins()
            .iter()
            .find(|b| b.name == specifier && !b.prefix_only),
    }
}

/// The name of the built-in module `specifier` names, without `node:`.
pub(crate) fn builtin_name(specifier: &str) -> Option<&'static str> {
    builtin(specifier).map(|b| b.name)
}

/// The names the built-in module `specifier` exports to `import { … }` (`default`
/// included); `None` if it is no builtin, or one whose exports vary.
pub(crate) fn builtin_exports(specifier: &str) -> Option<&'static BTreeSet<&'static str>> {
    builtin(specifier)?.exports.as_ref()
}

/// Whether `specifier` names a built-in module of Node 20: `fs`, `node:fs`, `node:test`.
pub(crate) fn is_node_builtin(specifier: &str) -> bool {
    builtin(specifier).is_some()
}

/// Why `node:{name}`, which [`is_node_builtin`] refused, cannot be imported, with the
/// builtin it most likely meant (`node:fss`, `node:Path`).
pub(crate) fn not_a_builtin(name: &str) -> String {
    let near = crate::event::nearest(&name.to_ascii_lowercase(), prefixed_builtins(), |b| {
        b.to_string()
    });
    let hint = match near {
        Some(b) => format!("did you mean `node:{b}`?"),
        None => "`node -p \"require('module').builtinModules\"` lists them".to_string(),
    };
    format!("`node:{name}` is not a built-in module of Node 20, which recipes run on; {hint}")
}

/// Where oxc injects runtime-helper imports from when lowering newer syntax.
const HELPER_MODULE: &str = "@oxc-project/runtime";

/// Where a TypeScript problem sits, 1-based line and column (column in chars).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TsDiagnostic {
    pub line: u32,
    pub column: u32,
    pub message: String,
    /// What kind of problem: [`UNRESOLVED`] for an import `rewrite` refused, else
    /// `"typescript"`.
    pub rule: &'static str,
}

/// [`TsDiagnostic::rule`] of an import that `rewrite` refused.
pub const UNRESOLVED: &str = "import-unresolved";

/// What `rewrite` answers for a specifier: `Ok(Some(new))` to replace it, `Ok(None)` to
/// keep it, `Err(why)` when it cannot be resolved (reported at the specifier).
pub type Resolution = Result<Option<String>, String>;

impl std::fmt::Display for TsDiagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

/// Compile TypeScript source to ESM JavaScript for Node 20.
/// `rewrite` is called with every module specifier found in static imports, `export … from`,
/// and dynamic `import()` of one string (`import("./x.ts")`, `import(("./x.ts"))`);
/// returning `Ok(Some(new))` replaces that string. It is also called with each whole value
/// a computed `import()` may have (`"lodash"` in `import(c ? "lodash" : "node:fs")`), so
/// the caller can check those too; a replacement is ignored for them. `Err(why)` reports
/// `cannot resolve import …: why` at the specifier, with rule [`UNRESOLVED`].
///
/// # Errors
///
/// Every diagnostic, in source order, if the file has a syntax or semantic
/// error or uses something this module refuses (see the module docs).
pub fn compile(
    source: &str,
    file_name: &Path,
    rewrite: &mut dyn FnMut(&str) -> Resolution,
) -> Result<String, Vec<TsDiagnostic>> {
    compile_module(source, file_name, rewrite).map(|(js, _)| js)
}

/// [`compile`], also returning what the module imports and exports by name ([`Links`]).
///
/// # Errors
///
/// As [`compile`].
pub fn compile_module(
    source: &str,
    file_name: &Path,
    rewrite: &mut dyn FnMut(&str) -> Resolution,
) -> Result<(String, Links), Vec<TsDiagnostic>> {
    compile_for(Purpose::Assemble, false, source, file_name, rewrite)
}

/// [`compile_module`], the output ending in an inline source map that leads back to
/// `file_name` (made absolute) and holds the source: node run with `--enable-source-maps`
/// then reports an error at its line in the TypeScript. For `test`, whose assembled
/// output is temporary; archives never carry one (their bytes would depend on the path).
///
/// # Errors
///
/// As [`compile`].
pub fn compile_module_mapped(
    source: &str,
    file_name: &Path,
    rewrite: &mut dyn FnMut(&str) -> Resolution,
) -> Result<(String, Links), Vec<TsDiagnostic>> {
    compile_for(Purpose::Assemble, true, source, file_name, rewrite)
}

/// Reads a JavaScript module that an assembled tree ships as it is, as node will load it:
/// the checks of [`compile`], but a computed `import()` of a relative module is left to
/// node, which resolves it when it runs (assemble refuses one, as it can neither rewrite
/// nor ship what it names). `rewrite`'s replacements are ignored.
///
/// # Errors
///
/// As [`compile`].
pub(crate) fn check_module(
    source: &str,
    file_name: &Path,
    rewrite: &mut dyn FnMut(&str) -> Resolution,
) -> Result<(), Vec<TsDiagnostic>> {
    compile_for(Purpose::Check, false, source, file_name, rewrite).map(|_| ())
}

/// Whether `source` is within what this compiler reads ([`MAX_SOURCE_LEN`], [`MAX_NESTING`]):
/// past them it refuses a module however valid, so a check of shipped code passes over it.
pub(crate) fn within_limits(source: &str) -> bool {
    let source = source.strip_prefix('\u{feff}').unwrap_or(source);
    check_size(source).is_ok() && check_nesting(source).is_ok()
}

/// What a compile is for (see [`check_module`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Purpose {
    /// A source whose output assemble ships.
    Assemble,
    /// A module an assembled tree ships as it is.
    Check,
}

fn compile_for(
    purpose: Purpose,
    map: bool,
    source: &str,
    file_name: &Path,
    rewrite: &mut dyn FnMut(&str) -> Resolution,
) -> Result<(String, Links), Vec<TsDiagnostic>> {
    check_file_name(file_name)?;
    // Not part of the program, and in the way of a hashbang; tsc reads files without it,
    // so positions do not count it either.
    let source = source.strip_prefix('\u{feff}').unwrap_or(source);
    check_size(source)?;
    check_nesting(source)?;
    if STACK.get() >= stack_size(source) {
        // This thread was started big enough (see `with_stack`): no thread of its own.
        return catch(|| compile_here(purpose, map, source, file_name, rewrite));
    }
    // oxc runs on its own thread so that it can have a stack big enough for
    // this source. `rewrite` is not `Send`, so it stays on this thread and
    // the compiler thread asks for each specifier over a channel.
    thread::scope(|scope| {
        let (ask, questions) = mpsc::channel::<String>();
        let (tell, answers) = mpsc::channel::<Resolution>();
        let worker = thread::Builder::new()
            .name("hookpack-tsc".into())
            .stack_size(stack_size(source))
            .spawn_scoped(scope, move || {
                compile_here(purpose, map, source, file_name, &mut |specifier: &str| {
                    // Only fails once this thread is being given up on: keep the specifier.
                    if ask.send(specifier.to_owned()).is_err() {
                        return Ok(None);
                    }
                    answers.recv().unwrap_or(Ok(None))
                })
            })
            .map_err(|err| vec![at_start(format!("cannot start the compiler thread: {err}"))])?;
        // Ends when the worker drops `ask`, i.e. when it has finished.
        for specifier in questions {
            if tell.send(rewrite(&specifier)).is_err() {
                break;
            }
        }
        worker
            .join()
            .unwrap_or_else(|panic| Err(internal_error(&*panic)))
    })
}

/// Only the pages the compiler actually touches get memory, so reserving
/// generously costs address space, not RAM.
/// A panic in oxc is a bug we can't fix here; it becomes a diagnostic on the file rather
/// than taking hookpack down with it.
fn internal_error(panic: &(dyn std::any::Any + Send)) -> Vec<TsDiagnostic> {
    let reason = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    vec![at_start(format!("internal error in oxc: {reason}"))]
}

fn catch(
    f: impl FnOnce() -> Result<(String, Links), Vec<TsDiagnostic>>,
) -> Result<(String, Links), Vec<TsDiagnostic>> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|panic| Err(internal_error(&*panic)))
}

/// Sources up to this size compile in place on a thread started by [`with_stack`] with
/// [`POOL_STACK`]; bigger ones still get a thread of their own.
const POOL_SOURCE_LEN: usize = 64 * 1024;

/// Stack for threads that compile many files (see [`with_stack`]): enough for every source
/// up to 64 KiB, so the usual hook compiles without starting a thread per file. Reserved,
/// not touched: the pages a compile does not reach are never allocated.
pub const POOL_STACK: usize = BASE_STACK + POOL_SOURCE_LEN * STACK_PER_SOURCE_BYTE;

thread_local! {
    /// Stack size this thread was started with, when [`with_stack`] told us.
    static STACK: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Runs `f` telling [`compile`] that the current thread was started with `stack` bytes of
/// stack (for example by [`crate::parallel::map_with_stack`]), so sources that fit compile
/// in place. Claiming more than the thread has would let oxc overflow it.
pub fn with_stack<R>(stack: usize, f: impl FnOnce() -> R) -> R {
    /// Puts the previous value back even if `f` panics.
    struct Restore(usize);
    impl Drop for Restore {
        fn drop(&mut self) {
            STACK.set(self.0);
        }
    }
    let _restore = Restore(STACK.replace(stack));
    f()
}

fn stack_size(source: &str) -> usize {
    BASE_STACK + source.len() * STACK_PER_SOURCE_BYTE
}

fn check_file_name(file_name: &Path) -> Result<(), Vec<TsDiagnostic>> {
    let accepted = matches!(
        file_name.extension().and_then(|ext| ext.to_str()),
        Some("ts" | "mts" | "js" | "mjs")
    ) && SourceType::from_path(file_name)
        .is_ok_and(|ty| !ty.is_typescript_definition());
    if accepted {
        Ok(())
    } else {
        Err(vec![at_start(format!(
            "{}: only .ts, .mts, .js and .mjs files can be compiled",
            file_name.display()
        ))])
    }
}

fn check_size(source: &str) -> Result<(), Vec<TsDiagnostic>> {
    if source.len() <= MAX_SOURCE_LEN {
        return Ok(());
    }
    Err(vec![at_start(format!(
        "file is {} bytes; at most {MAX_SOURCE_LEN} can be compiled",
        source.len()
    ))])
}

/// Refuses sources nested deeper than [`MAX_NESTING`], pointing at the
/// bracket that went too deep.
///
/// Lexical, but brackets inside comments, string literals, the text of template
/// literals and regular expression literals do not count: `"sad :("` a thousand
/// times is no nesting. A `/` starts a regular expression where an expression
/// may begin (after punctuation other than `)` and `]`, or a keyword such as
/// `return`), as a JavaScript lexer decides; elsewhere it divides.
fn check_nesting(source: &str) -> Result<(), Vec<TsDiagnostic>> {
    let b = source.as_bytes();
    let mut depth = 0usize;
    // For each `${` of a template literal open now, the depth its `}` closes.
    let mut templates: Vec<usize> = Vec::new();
    // Whether a `/` here would start a regular expression.
    let mut regex_may_start = true;
    // `await` and `yield` in a row (unary operators between them too): each is nested in
    // the next, and oxc's check of each looks at all of those around it, so a chain of
    // them costs time with the square of its length (160,000 awaits: 27 s).
    let mut chain = 0usize;
    let too_deep = |at: usize, what: &str| {
        let message = format!("{what} nested more than {MAX_NESTING} deep");
        Err(vec![Locator::new(source).diagnostic(
            at,
            message,
            "typescript",
        )])
    };
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if matches!(c, b'\'' | b'"' | b'`' | b')' | b']' | b'}' | b';' | b',') {
            chain = 0;
        }
        match c {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i = line_end(b, i);
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = (i + 2..b.len().saturating_sub(1))
                    .find(|&j| b[j] == b'*' && b[j + 1] == b'/')
                    .map_or(b.len(), |j| j + 2);
                continue;
            }
            b'\'' | b'"' => {
                i = quoted_end(b, i + 1, c, false);
                regex_may_start = false;
                continue;
            }
            b'/' if regex_may_start => {
                i = quoted_end(b, i + 1, b'/', true);
                regex_may_start = false;
                continue;
            }
            // A template literal's text: after its opening backquote, or after the `}` that
            // closes one of its `${…}`; it ends at a backquote, or at the next `${`.
            b'`' | b'}' if c == b'`' || templates.last() == Some(&depth) => {
                if c == b'}' {
                    templates.pop();
                    depth = depth.saturating_sub(1);
                }
                i = template_text_end(b, i + 1);
                let opens = b.get(i.wrapping_sub(2)..i) == Some(b"${");
                if opens {
                    depth += 1;
                    templates.push(depth);
                }
                regex_may_start = opens;
                continue;
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return too_deep(i, "brackets");
                }
                regex_may_start = true;
            }
            b')' | b']' => {
                depth = depth.saturating_sub(1);
                regex_may_start = false;
            }
            b'}' => {
                depth = depth.saturating_sub(1);
                regex_may_start = true;
            }
            c if c.is_ascii_whitespace() => {}
            c if c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80 => {
                let start = i;
                while i < b.len()
                    && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'_' | b'$') || b[i] >= 0x80)
                {
                    i += 1;
                }
                let word = &b[start..i];
                if matches!(word, b"await" | b"yield") {
                    chain += 1;
                    if chain > MAX_NESTING {
                        return too_deep(start, "`await` and `yield`");
                    }
                } else if !matches!(word, b"typeof" | b"void" | b"delete" | b"new") {
                    chain = 0;
                }
                // After a name or a number a `/` divides; after a keyword that an
                // expression follows, it starts a regular expression.
                regex_may_start = matches!(
                    &b[start..i],
                    b"return"
                        | b"typeof"
                        | b"case"
                        | b"do"
                        | b"else"
                        | b"in"
                        | b"of"
                        | b"void"
                        | b"delete"
                        | b"throw"
                        | b"new"
                        | b"yield"
                        | b"await"
                        | b"instanceof"
                );
                continue;
            }
            // Other punctuation (operators, `,`, `;`, `:`, `.`): an expression may follow.
            _ => regex_may_start = true,
        }
        i += 1;
    }
    Ok(())
}

/// Where the line holding `from` ends (the index of its line break, or the end).
fn line_end(b: &[u8], from: usize) -> usize {
    (from..b.len()).find(|&j| b[j] == b'\n').unwrap_or(b.len())
}

/// The index just past the `close` that ends a string (or, with `regex`, a regular
/// expression, whose `[…]` classes may hold the closer) whose body starts at `from`;
/// a line break also ends one, as it ends an unterminated literal for the parser.
fn quoted_end(b: &[u8], from: usize, close: u8, regex: bool) -> usize {
    let mut in_class = false;
    let mut j = from;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 1,
            b'\n' => return j,
            b'[' if regex => in_class = true,
            b']' if regex => in_class = false,
            c if c == close && !in_class => return j + 1,
            _ => {}
        }
        j += 1;
    }
    b.len()
}

/// The index just past the end of a template literal's text starting at `from`: past
/// its closing backquote, or past a `${` that opens an expression (the caller tells
/// which by the two bytes before).
fn template_text_end(b: &[u8], from: usize) -> usize {
    let mut j = from;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 1,
            b'`' => return j + 1,
            b'$' if b.get(j + 1) == Some(&b'{') => return j + 2,
            _ => {}
        }
        j += 1;
    }
    b.len()
}

/// The whole oxc pipeline; needs a stack of [`stack_size`].
fn compile_here(
    purpose: Purpose,
    map: bool,
    source: &str,
    file_name: &Path,
    rewrite: &mut dyn FnMut(&str) -> Resolution,
) -> Result<(String, Links), Vec<TsDiagnostic>> {
    let locator = Locator::new(source);
    let fail = |diagnostics: Vec<OxcDiagnostic>| Err(locator.convert(diagnostics));

    let allocator = Allocator::default();
    // `.ts` alone would be "unambiguous"; hooks are always ES modules. A `.js` or `.mjs`
    // source goes through the same passes, so that its imports are checked and rewritten.
    let javascript = matches!(
        file_name.extension().and_then(|ext| ext.to_str()),
        Some("js" | "mjs")
    );
    let source_type = if javascript {
        SourceType::mjs()
    } else {
        SourceType::ts().with_module(true)
    };
    // Regular expressions are parsed too, so that a bad or too new one is reported here
    // rather than by node when the hook first runs.
    let options = ParseOptions {
        parse_regular_expression: true,
        ..ParseOptions::default()
    };
    let parsed = Parser::new(&allocator, source, source_type)
        .with_options(options)
        .parse();
    let mut program = parsed.program;
    let mut diagnostics = parsed.diagnostics.into_vec();
    // TypeScript written in a `.js` file: say so, rather than only that a `:` is out of place.
    if javascript && has_errors(&diagnostics) {
        let as_ts = Allocator::default();
        let again = Parser::new(&as_ts, source, SourceType::ts().with_module(true))
            .with_options(options)
            .parse();
        if !again.panicked && again.diagnostics.is_empty() {
            if let Some(first) = diagnostics.first_mut() {
                *first = first.clone().with_help(
                    "this file is valid TypeScript: rename it to `.ts` (or `.mts`) so that its \
                     types are stripped",
                );
            }
        }
    }
    // A panicked parse leaves an empty program, which would check clean.
    if !parsed.panicked {
        let too_deep = indented_too_much(&program);
        if !too_deep.is_empty() {
            // Not worth checking further, and the checks would walk it all again.
            diagnostics.extend(too_deep);
            return fail(diagnostics);
        }
        diagnostics.extend(commonjs_only_syntax(&program));
        diagnostics.extend(syntax_newer_than_node_20(&program));
        let semantic = SemanticBuilder::new_compiler()
            // The enum transform reads member values from here; without them
            // it emits wrong reverse mappings for string members.
            .with_enum_eval(true)
            .build(&program);
        diagnostics.extend(semantic.diagnostics);
        diagnostics.extend(commonjs_globals(&program, &semantic.semantic));
        diagnostics.extend(regexp_constructor_patterns(
            &program,
            source,
            &semantic.semantic,
        ));
        diagnostics.extend(ambient_const_enums(&program, &semantic.semantic));
        diagnostics.extend(namespace_exported_variables(&program, &semantic.semantic));
        diagnostics.extend(names_of_other_namespace_blocks(
            &program,
            &semantic.semantic,
        ));
        diagnostics.extend(builtin_members_node_20_lacks(&program, &semantic.semantic));
        if !has_errors(&diagnostics) {
            let scoping = semantic.semantic.into_scoping();
            let options = TransformOptions::from(ESTarget::ES2022);
            let transformed = Transformer::new(&allocator, file_name, &options)
                .build_with_scoping(scoping, &mut program);
            diagnostics.extend(transformed.diagnostics);
            if !javascript && !has_errors(&diagnostics) {
                // oxc checks a TypeScript module's exports loosely, since one may name a
                // type (`export { T }`). With the types gone, the module is what node will
                // read, so it gets the JavaScript checks: an export of nothing, or of one
                // name twice, makes node refuse to link it.
                program.source_type = SourceType::mjs();
                let checked = SemanticBuilder::new_compiler().build(&program);
                diagnostics.extend(checked.diagnostics);
                diagnostics.extend(exported_twice(&program));
            }
            if !has_errors(&diagnostics) {
                // What node will read: the types are gone, and what the transform added is in.
                diagnostics.extend(nested_deeper_than_node_reads(&program));
            }
        }
    }
    if has_errors(&diagnostics) {
        return fail(diagnostics);
    }

    let mut pass = OutputPass {
        builder: AstBuilder::new(&allocator),
        rewrite,
        problems: Vec::new(),
        purpose,
    };
    pass.visit_program(&mut program);
    if !pass.problems.is_empty() {
        return fail(pass.problems);
    }
    let mapped = map.then(|| crate::fs::absolute(file_name));
    Ok((
        print(&program, mapped.as_deref()),
        links(&program, &locator),
    ))
}

/// What a compiled module imports from other modules and exports to them, by name: node
/// refuses to link a module that imports a name its target does not export (a type
/// re-exported without `type`, a typo), so assemble checks these across the recipe.
#[derive(Debug, Clone, Default)]
pub struct Links {
    /// Named imports (`import { a }`, `import d`, `export { a } from`), as rewritten.
    pub imports: Vec<NamedImport>,
    /// The names exported, `default` included, each with the binding it stands for.
    pub exports: std::collections::BTreeMap<String, Binding>,
    /// The specifiers of `export * from`, as rewritten: their names are exported too.
    pub star_from: Vec<String>,
    /// Relative paths the module reads beside itself: the literal `P` of each
    /// `new URL(P, import.meta.url)` that names a path beside the module (`./x`, `../x`,
    /// `x`, `file:x`; see `relative_url`).
    pub files_beside: Vec<FileBeside>,
}

/// A file a module names beside itself (see [`Links::files_beside`]).
#[derive(Debug, Clone)]
pub struct FileBeside {
    /// The relative path, as written (`./list.txt`).
    pub path: String,
    /// Where the path is in the source, 1-based (column in chars).
    pub line: u32,
    /// See `line`.
    pub column: u32,
}

/// What an exported name stands for, so that two `export *` giving one name can be told
/// apart from two giving the same binding (node refuses to link an import of the first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Binding {
    /// A binding of the module itself (`*default*` for `export default expression`; a
    /// namespace imported with `import * as` is one too).
    Local(String),
    /// A name of another module (`export { a } from`, `import { a } …; export { a }`), as
    /// rewritten.
    From { from: String, name: String },
}

/// One name imported from a module.
#[derive(Debug, Clone)]
pub struct NamedImport {
    /// The specifier, as rewritten (`./lib/hook.js`).
    pub from: String,
    /// The name imported (`default` for a default import).
    pub name: String,
    /// Where the name is in the source, 1-based (column in chars).
    pub line: u32,
    /// See `line`.
    pub column: u32,
}

/// Collects [`Links`] from a program after its imports were rewritten (their spans are
/// still the source's).
fn links(program: &Program<'_>, locator: &Locator<'_>) -> Links {
    use oxc::ast::ast::ImportDeclarationSpecifier as S;
    use oxc::span::GetSpan;
    let mut out = Links::default();
    let mut import = |from: &str, name: &str, span: Span| {
        let (line, column) = locator.position(span.start as usize);
        out.imports.push(NamedImport {
            from: from.to_string(),
            name: name.to_string(),
            line,
            column,
        });
    };
    let mut star_from = Vec::new();
    for statement in &program.body {
        match statement {
            Statement::ImportDeclaration(d) if d.import_kind.is_value() => {
                for spec in d.specifiers.iter().flatten() {
                    match spec {
                        S::ImportSpecifier(s) if s.import_kind.is_value() => {
                            import(&d.source.value, &s.imported.name(), s.imported.span())
                        }
                        S::ImportDefaultSpecifier(s) => import(&d.source.value, "default", s.span),
                        S::ImportSpecifier(_) | S::ImportNamespaceSpecifier(_) => {}
                    }
                }
            }
            Statement::ExportFromDeclaration(d) if d.export_kind.is_value() => {
                for s in d.specifiers.iter().filter(|s| s.export_kind.is_value()) {
                    import(&d.source.value, &s.local.name(), s.local.span());
                }
            }
            Statement::ExportAllDeclaration(d)
                if d.export_kind.is_value() && d.exported.is_none() =>
            {
                star_from.push(d.source.value.to_string())
            }
            _ => {}
        }
    }
    out.exports = exported_bindings(program);
    out.star_from = star_from;
    out.files_beside = (files_beside(program).into_iter())
        .map(|(path, span)| {
            let (line, column) = locator.position(span.start as usize);
            FileBeside { path, line, column }
        })
        .collect();
    out
}

/// The literal paths of `new URL("./…", import.meta.url)` in `program` (see
/// [`Links::files_beside`]).
fn files_beside(program: &Program<'_>) -> Vec<(String, Span)> {
    struct Finder {
        found: Vec<(String, Span)>,
    }
    impl<'a> oxc::ast_visit::Visit<'a> for Finder {
        fn visit_new_expression(&mut self, it: &oxc::ast::ast::NewExpression<'a>) {
            let is_url = matches!(&it.callee, Expression::Identifier(id) if id.name == "URL");
            if let (true, [path, base]) = (is_url, it.arguments.as_slice()) {
                let from_here = matches!(
                    base.as_expression().map(Expression::without_parentheses),
                    Some(Expression::StaticMemberExpression(m))
                        if m.property.name == "url"
                            && matches!(&m.object, Expression::ImportMeta(_))
                );
                let path = match path.as_expression().map(Expression::without_parentheses) {
                    Some(Expression::StringLiteral(s)) => Some((s.value.to_string(), s.span)),
                    Some(Expression::TemplateLiteral(t)) => {
                        t.single_quasi().map(|q| (q.to_string(), t.span))
                    }
                    _ => None,
                };
                if let (true, Some((path, span))) = (from_here, path) {
                    if relative_url(&path).is_some() {
                        self.found.push((path, span));
                    }
                }
            }
            oxc::ast_visit::walk::walk_new_expression(self, it);
        }
    }
    let mut finder = Finder { found: Vec::new() };
    oxc::ast_visit::Visit::visit_program(&mut finder, program);
    finder.found
}

/// The relative reference a URL makes when resolved against a module's `import.meta.url`,
/// if it names a path beside the module, as the WHATWG URL parser reads it against a
/// `file:` base: `./x`, `../x` and a bare `x` or `a/b` do, and so does `file:x` (a `file:`
/// URL with no `/` after the colon is relative to a `file:` base), given as `x`. One with
/// another scheme (`https:`, `data:`, `node:`), a leading `/` or `\` (from the root), a
/// Windows drive letter (`c|/x`, `file:c:/x`) or nothing at all (the module itself) does
/// not, nor one with white space or control characters at either end or a tab or line
/// break inside, which the parser strips (left alone rather than guessed at).
pub(crate) fn relative_url(url: &str) -> Option<&str> {
    let has_scheme = |url: &str| {
        url.split_once(':').is_some_and(|(scheme, _)| {
            scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        })
    };
    let stripped = url.trim_matches(|c: char| c <= ' ');
    if stripped != url || url.contains(['\t', '\n', '\r']) {
        return None;
    }
    let rest = if starts_with_scheme(url, "file:") {
        &url[5..]
    } else if has_scheme(url) {
        return None;
    } else {
        url
    };
    let drive = match rest.as_bytes() {
        [letter, b':' | b'|', after @ ..] => {
            letter.is_ascii_alphabetic()
                && matches!(after.first(), None | Some(b'/' | b'\\' | b'?' | b'#'))
        }
        _ => false,
    };
    (!rest.is_empty() && !rest.starts_with(['/', '\\']) && !drive).then_some(rest)
}

/// The binding of each name a program exports (see [`Binding`]).
fn exported_bindings(program: &Program<'_>) -> std::collections::BTreeMap<String, Binding> {
    exported_names(program)
        .into_iter()
        .map(|(name, _, binding)| (name.to_string(), binding))
        .collect()
}

/// Each name a program exports (`default` included, `export *` not), where it is named and
/// what it stands for, in source order.
fn exported_names<'a>(program: &Program<'a>) -> Vec<(&'a str, Span, Binding)> {
    use oxc::ast::ast::{ExportDefaultDeclarationKind as K, ImportDeclarationSpecifier as S};
    use oxc::span::GetSpan;
    let from = |source: &StringLiteral<'_>, name: &str| Binding::From {
        from: source.value.to_string(),
        name: name.to_string(),
    };
    // What each imported name stands for; a namespace import is a binding of this module.
    let mut imported = std::collections::BTreeMap::new();
    for statement in &program.body {
        if let Statement::ImportDeclaration(d) = statement {
            for spec in d.specifiers.iter().flatten() {
                let name = match spec {
                    S::ImportSpecifier(s) => s.imported.name(),
                    S::ImportDefaultSpecifier(_) => "default".into(),
                    S::ImportNamespaceSpecifier(_) => continue,
                };
                imported.insert(spec.local().name.as_str(), from(&d.source, &name));
            }
        }
    }
    let local = |name: &str| {
        (imported.get(name).cloned()).unwrap_or_else(|| Binding::Local(name.to_string()))
    };
    let mut names = Vec::new();
    for statement in &program.body {
        match statement {
            Statement::ExportNamedDeclaration(d) if d.export_kind.is_value() => {
                for s in d.specifiers.iter().filter(|s| s.export_kind.is_value()) {
                    let name = s.exported.name().as_str();
                    names.push((name, s.exported.span(), local(&s.local.name())));
                }
            }
            Statement::ExportFromDeclaration(d) if d.export_kind.is_value() => {
                for s in d.specifiers.iter().filter(|s| s.export_kind.is_value()) {
                    let binding = from(&d.source, &s.local.name());
                    names.push((s.exported.name().as_str(), s.exported.span(), binding));
                }
            }
            // Declarations (`export const a`) are local.
            Statement::ExportDeclaration(d) => match &d.declaration {
                Declaration::VariableDeclaration(v) => {
                    for declarator in &v.declarations {
                        for id in declarator.id.get_binding_identifiers() {
                            let binding = Binding::Local(id.name.to_string());
                            names.push((id.name.as_str(), id.span, binding));
                        }
                    }
                }
                other => {
                    if let Some(id) = other.id() {
                        let binding = Binding::Local(id.name.to_string());
                        names.push((id.name.as_str(), id.span, binding));
                    }
                }
            },
            Statement::ExportDefaultDeclaration(d) => {
                let name = match &d.declaration {
                    K::FunctionDeclaration(f) => f.id.as_ref().map(|id| id.name.as_str()),
                    K::ClassDeclaration(c) => c.id.as_ref().map(|id| id.name.as_str()),
                    _ => None,
                };
                let binding = Binding::Local(name.unwrap_or("*default*").into());
                names.push(("default", d.span, binding));
            }
            // Node 20 (V8 11.3) gives each `export * as ns from` a binding of its own
            // module, as `import * as ns` is, not the namespace the spec resolves to.
            Statement::ExportAllDeclaration(d) if d.export_kind.is_value() => {
                if let Some(name) = &d.exported {
                    let binding = Binding::Local(format!("* as {}", name.name()));
                    names.push((name.name().as_str(), name.span(), binding));
                }
            }
            _ => {}
        }
    }
    names
}

/// A name exported twice, which node refuses to link. oxc reports it in JavaScript only: a
/// TypeScript name may be exported once as a type and once as a value.
fn exported_twice(program: &Program<'_>) -> Vec<OxcDiagnostic> {
    let mut seen = BTreeSet::new();
    exported_names(program)
        .into_iter()
        .filter(|(name, ..)| !seen.insert(*name))
        .map(|(name, span, _)| {
            OxcDiagnostic::error(format!(
                "`{name}` is exported twice, and node refuses to load a module that does so; \
                 export each name once"
            ))
            .with_label(span)
        })
        .collect()
}

/// Parts of a parsed regular expression that Node 20 (V8 11.3) cannot compile although oxc
/// parses them: modifiers (`(?i:…)`) and a capture group name used twice (ES2025), and the
/// script `Katakana_Or_Hiragana`.
#[derive(Default)]
struct PatternsNewerThanNode20<'a> {
    names: BTreeSet<&'a str>,
    found: Vec<OxcDiagnostic>,
}

impl<'a> oxc::regular_expression::visit::Visit<'a> for PatternsNewerThanNode20<'a> {
    fn visit_ignore_group(&mut self, it: &oxc::regular_expression::ast::IgnoreGroup<'a>) {
        if it.modifiers.is_some() {
            self.found.push(
                OxcDiagnostic::error(
                    "regular expression modifiers (`(?i:…)`) are not supported by Node \
                     20; use a flag on the whole expression or spell the cases out \
                     (`[Aa]`)",
                )
                .with_label(it.span),
            );
        }
        oxc::regular_expression::visit::walk::walk_ignore_group(self, it);
    }

    fn visit_capturing_group(&mut self, it: &oxc::regular_expression::ast::CapturingGroup<'a>) {
        if let Some(name) = &it.name {
            if !self.names.insert(name.as_str()) {
                self.found.push(
                    OxcDiagnostic::error(format!(
                        "the capture group name `{name}` is used twice, which Node 20 \
                         does not support even in separate alternatives; give each group \
                         its own name"
                    ))
                    .with_label(it.span),
                );
            }
        }
        oxc::regular_expression::visit::walk::walk_capturing_group(self, it);
    }

    // oxc's property tables and Node 20.20's (ICU 78) are both Unicode 17 and differ in one
    // value: V8 refuses the script `Katakana_Or_Hiragana` (`Hrkt`), which has no characters
    // of its own. Checked against every name and value in oxc's tables.
    fn visit_unicode_property_escape(
        &mut self,
        it: &oxc::regular_expression::ast::UnicodePropertyEscape<'a>,
    ) {
        let script = matches!(
            it.name.as_str(),
            "Script" | "sc" | "Script_Extensions" | "scx"
        );
        let value = it.value.as_ref().map(|v| v.as_str());
        if script && matches!(value, Some("Katakana_Or_Hiragana" | "Hrkt")) {
            self.found.push(
                OxcDiagnostic::error(
                    "the script `Katakana_Or_Hiragana` is not supported by Node 20; use \
                     `[\\p{Script=Hiragana}\\p{Script=Katakana}]`",
                )
                .with_label(it.span),
            );
        }
    }
}

/// What Node 20 would refuse in one parsed pattern.
fn pattern_newer_than_node_20(
    pattern: &oxc::regular_expression::ast::Pattern<'_>,
) -> Vec<OxcDiagnostic> {
    use oxc::regular_expression::visit::Visit as _;
    let mut check = PatternsNewerThanNode20::default();
    check.visit_pattern(pattern);
    check.found
}

/// Syntax that oxc parses and leaves as it is, and that Node 20 (V8 11.3) cannot parse:
/// regular expression modifiers and a capture group name used twice (see
/// [`PatternsNewerThanNode20`]), deferred or source-phase imports (stage 3), and `using`
/// declarations, which oxc leaves to its runtime helper. Node would refuse to load the file.
fn syntax_newer_than_node_20(program: &Program<'_>) -> Vec<OxcDiagnostic> {
    struct Finder {
        found: Vec<OxcDiagnostic>,
    }
    impl Finder {
        fn phase(&mut self, phase: Option<oxc::ast::ast::ImportPhase>, span: Span) {
            if let Some(phase) = phase {
                let what = match phase {
                    oxc::ast::ast::ImportPhase::Defer => "defer",
                    oxc::ast::ast::ImportPhase::Source => "source",
                };
                self.found.push(
                    OxcDiagnostic::error(format!(
                        "`import {what}` is not supported by Node 20; import the module \
                         normally"
                    ))
                    .with_label(span),
                );
            }
        }
    }
    impl Finder {
        /// Import assertions (`assert { type: "json" }`): Node 20 warns of them on every
        /// run, and Node 22 refuses them; `with` is the standard form.
        fn assertion(&mut self, with: Option<&WithClause<'_>>) {
            if let Some(w) = with.filter(|w| w.keyword == oxc::ast::ast::WithClauseKeyword::Assert)
            {
                self.found.push(
                    OxcDiagnostic::error(
                        "import assertions (`assert { … }`) are deprecated in Node 20, which \
                         warns of them on every run, and refused from Node 22 on; write `with { \
                         type: \"json\" }`",
                    )
                    .with_label(w.span),
                );
            }
        }
    }
    impl<'a> oxc::ast_visit::Visit<'a> for Finder {
        fn visit_export_from_declaration(&mut self, it: &ExportFromDeclaration<'a>) {
            self.assertion(it.with_clause.as_deref());
            oxc::ast_visit::walk::walk_export_from_declaration(self, it);
        }

        fn visit_export_all_declaration(&mut self, it: &ExportAllDeclaration<'a>) {
            self.assertion(it.with_clause.as_deref());
            oxc::ast_visit::walk::walk_export_all_declaration(self, it);
        }

        fn visit_reg_exp_literal(&mut self, it: &oxc::ast::ast::RegExpLiteral<'a>) {
            if let Some(pattern) = &it.regex.pattern.pattern {
                self.found.extend(pattern_newer_than_node_20(pattern));
            }
        }

        fn visit_import_declaration(&mut self, it: &ImportDeclaration<'a>) {
            self.phase(it.phase, it.span);
            self.assertion(it.with_clause.as_deref());
            oxc::ast_visit::walk::walk_import_declaration(self, it);
        }

        fn visit_import_expression(&mut self, it: &ImportExpression<'a>) {
            self.phase(it.phase, it.span);
            // `import(x, { assert: { … } })`: Node 22 ignores the assertion and refuses
            // the JSON module for lack of a `with`.
            if let Some(Expression::ObjectExpression(options)) = &it.options {
                for property in &options.properties {
                    if let oxc::ast::ast::ObjectPropertyKind::ObjectProperty(p) = property {
                        if p.key.static_name().is_some_and(|n| n == "assert") {
                            self.found.push(
                                OxcDiagnostic::error(
                                    "an import assertion (`{ assert: { … } }`) is deprecated \
                                     in Node 20 and ignored from Node 22 on, which then refuses \
                                     a JSON module; write `{ with: { type: \"json\" } }`",
                                )
                                .with_label(oxc::span::GetSpan::span(&p.key)),
                            );
                        }
                    }
                }
            }
            oxc::ast_visit::walk::walk_import_expression(self, it);
        }

        // oxc lowers these only by importing its runtime helper (`usingCtx`), which the
        // output pass would refuse at the start of the file, not here.
        fn visit_variable_declaration(&mut self, it: &oxc::ast::ast::VariableDeclaration<'a>) {
            if it.kind.is_using() {
                let what = it.kind.as_str();
                self.found.push(
                    OxcDiagnostic::error(format!(
                        "`{what}` declarations are not supported by Node 20 (oxc could only \
                         compile them with a runtime helper a hook cannot import); declare the \
                         resource with `const` and dispose of it in a `try … finally` block"
                    ))
                    .with_label(it.span),
                );
            }
            oxc::ast_visit::walk::walk_variable_declaration(self, it);
        }
    }
    let mut finder = Finder { found: Vec::new() };
    oxc::ast_visit::Visit::visit_program(&mut finder, program);
    finder.found
}

/// An ambient (`declare`d) enum has no value at run time, const or not: a const one's
/// members are only inlined by a compiler that sees every file (tsc without
/// isolatedModules), never by this one. Reading one as a value (`D.A`) fails in node; using
/// it as a type is fine, unless it is exported (another module may read it).
fn ambient_const_enums(program: &Program<'_>, semantic: &Semantic<'_>) -> Vec<OxcDiagnostic> {
    let scoping = semantic.scoping();
    let mut found = Vec::new();
    for statement in &program.body {
        let e = match statement {
            Statement::TSEnumDeclaration(e) => e,
            Statement::ExportDeclaration(export) => match &export.declaration {
                Declaration::TSEnumDeclaration(e) => e,
                _ => continue,
            },
            _ => continue,
        };
        let Some(symbol) = e.id.symbol_id.get() else {
            continue;
        };
        // Exported, it may be read in another module (`M.D.A` through `import * as M`).
        let exported = matches!(statement, Statement::ExportDeclaration(_));
        let read = (scoping.get_resolved_references(symbol)).any(|r| r.is_value());
        if e.declare && (read || exported) {
            found.push(
                OxcDiagnostic::error(
                    "a `declare`d enum has no value at run time, so reading its members gives \
                     an error in node; remove `declare` (and `const`) to give the enum a value",
                )
                .with_label(e.span),
            );
        }
    }
    found
}

/// Refuses a program whose syntax tree goes deeper than [`MAX_SYNTAX_DEPTH`], pointing at
/// where it first does: node's parser recurses as it reads nested code, and runs out of
/// stack (`RangeError: Maximum call stack size exceeded`, before the hook runs at all) at
/// about a thousand nested arrow functions, 1,300 nested calls or 3,600 `else if`s.
///
/// Every node of the tree counts one level, but for what node reads more cheaply (measured
/// against node 20.20 on some 40 shapes, each is refused at two thirds or less of the depth
/// node reads):
/// - a chain of one arithmetic or bitwise operator (`a + b + c + …`) counts none, as node
///   reads it in a loop, however long; another operator's left operand (`a + b - c`, or a
///   comparison's) counts a quarter;
/// - the callee of a call and the object of a member access (`a.b().c().d()`) count a
///   quarter, an `else if` a third, and the `:` branch of a conditional that is a
///   conditional too (`a ? 1 : b ? 2 : …`) a half;
/// - an object literal's property is no level of its own (`{a: {b: 1}}` nests as deep as
///   `[[1]]`).
fn nested_deeper_than_node_reads(program: &Program<'_>) -> Vec<OxcDiagnostic> {
    match first_too_deep(program) {
        Some(span) => vec![OxcDiagnostic::error(format!(
            "code nested more than {MAX_SYNTAX_DEPTH} deep (counting each expression and \
             statement inside another): node runs out of stack reading code nested about a \
             thousand deep; flatten it (move nested code into named functions, turn a long \
             `else if` chain into a lookup table)"
        ))
        .with_label(Span::new(span.start, span.start))],
        None => Vec::new(),
    }
}

/// Where the syntax tree of `program` first goes deeper than [`MAX_SYNTAX_DEPTH`] (see
/// [`nested_deeper_than_node_reads`]).
fn first_too_deep(program: &Program<'_>) -> Option<Span> {
    use oxc::{
        ast::{
            ast::{
                BinaryExpression, CallExpression, ComputedMemberExpression, ConditionalExpression,
                IfStatement, LogicalExpression, ObjectProperty, PrivateFieldExpression,
                StaticMemberExpression,
            },
            AstKind,
        },
        ast_visit::{walk, Visit},
        span::GetSpan,
    };
    /// Depth is counted in twelfths of a level.
    const LEVEL: usize = 12;
    const QUARTER: usize = LEVEL / 4;
    struct Depth {
        depth: usize,
        /// The span of the last node entered that has one (nodes a transform made have none).
        last: Span,
        over: Option<Span>,
    }
    impl Depth {
        /// Visits a child of the node just entered that counts `cost` (in twelfths) below
        /// it, not a whole level.
        fn lighter(&mut self, cost: usize, visit: impl FnOnce(&mut Self)) {
            self.depth -= LEVEL - cost;
            visit(self);
            self.depth += LEVEL - cost;
        }
    }
    impl<'a> Visit<'a> for Depth {
        fn enter_node(&mut self, kind: AstKind<'a>) {
            self.depth += LEVEL;
            let span = kind.span();
            if !span.is_empty() {
                self.last = span;
            }
            if self.depth > MAX_SYNTAX_DEPTH * LEVEL && self.over.is_none() {
                self.over = Some(self.last);
            }
        }

        fn leave_node(&mut self, _kind: AstKind<'a>) {
            self.depth -= LEVEL;
        }

        fn visit_binary_expression(&mut self, it: &BinaryExpression<'a>) {
            let op = it.operator;
            let looped = (op.is_arithmetic() || op.is_bitwise() || op.is_bitshift())
                && op != oxc::ast::ast::BinaryOperator::Exponential
                && matches!(&it.left, Expression::BinaryExpression(left) if left.operator == op);
            let kind = AstKind::BinaryExpression(self.alloc(it));
            self.enter_node(kind);
            let cost = if looped { 0 } else { QUARTER };
            self.lighter(cost, |v| v.visit_expression(&it.left));
            self.visit_expression(&it.right);
            self.leave_node(kind);
        }

        fn visit_logical_expression(&mut self, it: &LogicalExpression<'a>) {
            let looped = matches!(&it.left,
                Expression::LogicalExpression(left) if left.operator == it.operator);
            let kind = AstKind::LogicalExpression(self.alloc(it));
            self.enter_node(kind);
            let cost = if looped { 0 } else { QUARTER };
            self.lighter(cost, |v| v.visit_expression(&it.left));
            self.visit_expression(&it.right);
            self.leave_node(kind);
        }

        fn visit_call_expression(&mut self, it: &CallExpression<'a>) {
            let kind = AstKind::CallExpression(self.alloc(it));
            self.enter_node(kind);
            self.lighter(QUARTER, |v| v.visit_expression(&it.callee));
            self.visit_arguments(&it.arguments);
            self.leave_node(kind);
        }

        fn visit_static_member_expression(&mut self, it: &StaticMemberExpression<'a>) {
            let kind = AstKind::StaticMemberExpression(self.alloc(it));
            self.enter_node(kind);
            self.lighter(QUARTER, |v| v.visit_expression(&it.object));
            self.leave_node(kind);
        }

        fn visit_computed_member_expression(&mut self, it: &ComputedMemberExpression<'a>) {
            let kind = AstKind::ComputedMemberExpression(self.alloc(it));
            self.enter_node(kind);
            self.lighter(QUARTER, |v| v.visit_expression(&it.object));
            self.visit_expression(&it.expression);
            self.leave_node(kind);
        }

        fn visit_private_field_expression(&mut self, it: &PrivateFieldExpression<'a>) {
            let kind = AstKind::PrivateFieldExpression(self.alloc(it));
            self.enter_node(kind);
            self.lighter(QUARTER, |v| v.visit_expression(&it.object));
            self.leave_node(kind);
        }

        fn visit_conditional_expression(&mut self, it: &ConditionalExpression<'a>) {
            let kind = AstKind::ConditionalExpression(self.alloc(it));
            self.enter_node(kind);
            self.visit_expression(&it.test);
            self.visit_expression(&it.consequent);
            if matches!(&it.alternate, Expression::ConditionalExpression(_)) {
                self.lighter(LEVEL / 2, |v| v.visit_expression(&it.alternate));
            } else {
                self.visit_expression(&it.alternate);
            }
            self.leave_node(kind);
        }

        fn visit_object_property(&mut self, it: &ObjectProperty<'a>) {
            self.lighter(0, |v| walk::walk_object_property(v, it));
        }

        fn visit_if_statement(&mut self, it: &IfStatement<'a>) {
            let kind = AstKind::IfStatement(self.alloc(it));
            self.enter_node(kind);
            self.visit_expression(&it.test);
            self.visit_statement(&it.consequent);
            match &it.alternate {
                Some(alternate @ Statement::IfStatement(_)) => {
                    self.lighter(LEVEL / 3, |v| v.visit_statement(alternate));
                }
                Some(alternate) => self.visit_statement(alternate),
                None => {}
            }
            self.leave_node(kind);
        }
    }
    let mut depth = Depth {
        depth: 0,
        last: Span::default(),
        over: None,
    };
    depth.visit_program(program);
    depth.over
}

/// The printer indents each line one tab per level of nesting, and some nesting costs no
/// bracket in the source: an `if` nested in an `if` is printed in braces, a dotted
/// namespace (`namespace a.b.c`) becomes a function per name. So the output can grow with
/// the square of the source (`if(a)` 20,000 times printed 400 MB), and a hostile megabyte
/// would take minutes and gigabytes of memory. This estimates the tabs of the printed lines
/// (statements, class members and object properties, each at its depth) and refuses a
/// file over [`MAX_INDENTATION`], where it goes over.
fn indented_too_much(program: &Program<'_>) -> Vec<OxcDiagnostic> {
    use oxc::span::GetSpan;
    struct Indent {
        depth: usize,
        tabs: usize,
        over: Option<Span>,
    }
    impl Indent {
        /// Counts `lines` lines at one level deeper; false once over the limit.
        fn lines(&mut self, lines: usize, span: Span) -> bool {
            if self.over.is_some() {
                return false;
            }
            self.tabs = self
                .tabs
                .saturating_add(lines.saturating_mul(self.depth + 1));
            if self.tabs > MAX_INDENTATION {
                self.over = Some(span);
                return false;
            }
            true
        }
    }
    impl<'a> oxc::ast_visit::Visit<'a> for Indent {
        fn visit_statement(&mut self, it: &Statement<'a>) {
            if self.lines(1, it.span()) {
                self.depth += 1;
                oxc::ast_visit::walk::walk_statement(self, it);
                self.depth -= 1;
            }
        }

        fn visit_if_statement(&mut self, it: &oxc::ast::ast::IfStatement<'a>) {
            self.visit_expression(&it.test);
            self.visit_statement(&it.consequent);
            // `} else if (…) {` is printed at the depth of its `if`, not a level deeper.
            match &it.alternate {
                Some(alternate @ Statement::IfStatement(_)) => {
                    self.depth -= 1;
                    self.visit_statement(alternate);
                    self.depth += 1;
                }
                Some(alternate) => self.visit_statement(alternate),
                None => {}
            }
        }

        fn visit_ts_namespace_declaration(
            &mut self,
            it: &oxc::ast::ast::TSNamespaceDeclaration<'a>,
        ) {
            // Each name becomes `let n;`, `(function(_n) {` and `})(…);`, its body a level
            // deeper.
            if self.lines(3, it.span) {
                self.depth += 1;
                oxc::ast_visit::walk::walk_ts_namespace_declaration(self, it);
                self.depth -= 1;
            }
        }

        fn visit_object_expression(&mut self, it: &oxc::ast::ast::ObjectExpression<'a>) {
            if self.lines(it.properties.len(), it.span) {
                self.depth += 1;
                oxc::ast_visit::walk::walk_object_expression(self, it);
                self.depth -= 1;
            }
        }

        fn visit_class_body(&mut self, it: &oxc::ast::ast::ClassBody<'a>) {
            if self.lines(it.body.len(), it.span) {
                self.depth += 1;
                oxc::ast_visit::walk::walk_class_body(self, it);
                self.depth -= 1;
            }
        }
    }
    let mut indent = Indent {
        depth: 0,
        tabs: 0,
        over: None,
    };
    oxc::ast_visit::Visit::visit_program(&mut indent, program);
    let Some(span) = indent.over else {
        return Vec::new();
    };
    vec![OxcDiagnostic::error(format!(
        "code nested this deep, this much of it, would print more than {} MiB of \
         indentation; flatten the nesting (move nested code into functions, join nested `if`s \
         with `&&`, give a namespace fewer dotted names)",
        MAX_INDENTATION >> 20
    ))
    .with_label(Span::new(span.start, span.start))]
}

/// A namespace's `export let` (or `var`): oxc compiles it to a local variable that only
/// starts out equal to `N.x`, so the namespace's own assignments (`x++`) never reach `N.x`
/// and assignments to `N.x` never reach the namespace's code; tsc writes and reads it as
/// `N.x` throughout. oxc only warns of it. Ambient namespaces leave no code, so theirs are
/// fine, and so is one the namespace's code never names: it is then only ever `N.x`, whose
/// first value the copy's declaration sets.
fn namespace_exported_variables(
    program: &Program<'_>,
    semantic: &Semantic<'_>,
) -> Vec<OxcDiagnostic> {
    struct Finder<'s> {
        scoping: &'s oxc::semantic::Scoping,
        /// The namespaces we are in, outermost first (`A.B` is two).
        path: Vec<String>,
        found: Vec<OxcDiagnostic>,
    }
    impl<'a> oxc::ast_visit::Visit<'a> for Finder<'_> {
        fn visit_ts_namespace_declaration(
            &mut self,
            it: &oxc::ast::ast::TSNamespaceDeclaration<'a>,
        ) {
            // Everything inside an ambient namespace is ambient too.
            if it.declare {
                return;
            }
            self.path.push(it.id.name.to_string());
            if let oxc::ast::ast::TSNamespaceDeclarationBody::TSModuleBlock(block) = &it.body {
                let name = self.path.join(".");
                for statement in &block.body {
                    let Statement::ExportDeclaration(export) = statement else {
                        continue;
                    };
                    let Declaration::VariableDeclaration(variable) = &export.declaration else {
                        continue;
                    };
                    if variable.declare || variable.kind.is_const() {
                        continue;
                    }
                    let named = (variable.declarations.iter())
                        .flat_map(|d| d.id.get_binding_identifiers())
                        .filter_map(|id| id.symbol_id.get())
                        .any(|symbol| !self.scoping.get_resolved_reference_ids(symbol).is_empty());
                    if !named {
                        continue;
                    }
                    let kind = variable.kind.as_str();
                    self.found.push(
                        OxcDiagnostic::error(format!(
                            "`export {kind}` in namespace `{name}` is not supported: the \
                             compiled namespace would keep its own copy of the variable, so \
                             assignments to it would not change `{name}.…` (nor the other way \
                             round); use `export const`, and keep a value that changes in an \
                             object (`export const state = {{ count: 0 }}`)"
                        ))
                        .with_label(variable.span),
                    );
                }
            }
            oxc::ast_visit::walk::walk_ts_namespace_declaration(self, it);
            self.path.pop();
        }
    }
    let mut finder = Finder {
        scoping: semantic.scoping(),
        path: Vec::new(),
        found: Vec::new(),
    };
    oxc::ast_visit::Visit::visit_program(&mut finder, program);
    finder.found
}

/// A name exported by one block of a namespace and used bare in another
/// (`namespace N { export const a = 1 }` then `namespace N { f(a) }`): TypeScript merges the
/// blocks, so tsc compiles it to `N.a`; oxc compiles each block on its own and leaves `a`,
/// which is undefined in node (a ReferenceError) or names something else outside.
fn names_of_other_namespace_blocks(
    program: &Program<'_>,
    semantic: &Semantic<'_>,
) -> Vec<OxcDiagnostic> {
    use oxc::ast::ast::{TSModuleBlock, TSNamespaceDeclaration, TSNamespaceDeclarationBody};
    use oxc::semantic::ScopeId;
    use std::collections::{BTreeMap, BTreeSet};

    /// One block of a namespace: the scope names in it resolve in, and its exported values.
    struct Block<'b, 'a> {
        scope: ScopeId,
        /// None for a dotted name's outer namespace (`A` of `namespace A.B`), whose only
        /// export is the inner one.
        body: Option<&'b TSModuleBlock<'a>>,
        exports: BTreeSet<String>,
        /// Its exported enums, each with its place.
        enums: Vec<(String, Span)>,
        /// The namespaces it is in, outermost first, itself last: each one's key and the
        /// scope of its block that holds this one.
        chain: Vec<(usize, ScopeId)>,
    }
    struct Blocks<'b, 'a> {
        /// The names of the namespaces we are in, outermost first (`A.B` is two).
        path: Vec<String>,
        /// The blocks we are in, outermost first: their namespace's key and their scope.
        within: Vec<(usize, ScopeId)>,
        /// The namespace we are in, as an index of `keys` (0 outside any): a namespace is
        /// its outer one's and its name, an unexported one's with the block it is in (such
        /// a namespace is that block's alone, merging only with those of its name there).
        key: usize,
        keys: BTreeMap<(usize, String), usize>,
        /// By key: the namespace's name and its blocks.
        found: BTreeMap<usize, (String, Vec<Block<'b, 'a>>)>,
    }
    impl<'b, 'a> Blocks<'b, 'a> {
        /// Collects the blocks of `it`; `within` is the block it is declared in without
        /// `export`, if so.
        fn namespace(&mut self, it: &'b TSNamespaceDeclaration<'a>, within: Option<ScopeId>) {
            if it.declare {
                return;
            }
            self.path.push(it.id.name.to_string());
            let outer = self.key;
            let name = match within {
                Some(block) => format!("{}@{}", it.id.name, block.index()),
                None => it.id.name.to_string(),
            };
            let next = self.keys.len() + 1;
            self.key = *self.keys.entry((outer, name)).or_insert(next);
            let scope = it.scope_id.get();
            let entered = scope.map(|scope| self.within.push((self.key, scope)));
            match &it.body {
                TSNamespaceDeclarationBody::TSNamespaceDeclaration(inner) => {
                    if let Some(scope) = scope {
                        let block = Block {
                            scope,
                            body: None,
                            exports: BTreeSet::from([inner.id.name.to_string()]),
                            enums: Vec::new(),
                            chain: self.within.clone(),
                        };
                        let entry = self.found.entry(self.key);
                        let path = &self.path;
                        let blocks = &mut entry.or_insert_with(|| (path.join("."), Vec::new())).1;
                        blocks.push(block);
                    }
                    self.namespace(inner, None)
                }
                TSNamespaceDeclarationBody::TSModuleBlock(body) => {
                    let mut exports = BTreeSet::new();
                    let mut enums = Vec::new();
                    for statement in &body.body {
                        match statement {
                            Statement::ExportDeclaration(export) => {
                                exported_values(&export.declaration, &mut exports);
                                if let Declaration::TSEnumDeclaration(e) = &export.declaration {
                                    enums.push((e.id.name.to_string(), e.span));
                                }
                                if let Declaration::TSNamespaceDeclaration(inner) =
                                    &export.declaration
                                {
                                    self.namespace(inner, None);
                                }
                            }
                            Statement::TSNamespaceDeclaration(inner) if scope.is_some() => {
                                self.namespace(inner, scope)
                            }
                            _ => {}
                        }
                    }
                    if let Some(scope) = scope {
                        let block = Block {
                            scope,
                            body: Some(body),
                            exports,
                            enums,
                            chain: self.within.clone(),
                        };
                        let entry = self.found.entry(self.key);
                        let path = &self.path;
                        let blocks = &mut entry.or_insert_with(|| (path.join("."), Vec::new())).1;
                        blocks.push(block);
                    }
                }
            }
            if entered.is_some() {
                self.within.pop();
            }
            self.path.pop();
            self.key = outer;
        }
    }
    fn exported_values(declaration: &Declaration<'_>, into: &mut BTreeSet<String>) {
        match declaration {
            Declaration::VariableDeclaration(v) if !v.declare => {
                for d in &v.declarations {
                    for id in d.id.get_binding_identifiers() {
                        into.insert(id.name.to_string());
                    }
                }
            }
            Declaration::FunctionDeclaration(f) if !f.declare => {
                into.extend(f.id.as_ref().map(|id| id.name.to_string()));
            }
            Declaration::ClassDeclaration(c) if !c.declare => {
                into.extend(c.id.as_ref().map(|id| id.name.to_string()));
            }
            Declaration::TSEnumDeclaration(e) if !e.declare => {
                into.insert(e.id.name.to_string());
            }
            Declaration::TSNamespaceDeclaration(n) if !n.declare => {
                into.insert(n.id.name.to_string());
            }
            _ => {}
        }
    }
    struct Uses<'s> {
        scoping: &'s oxc::semantic::Scoping,
        /// The block's namespaces, outermost first, itself last: the scope of each one's
        /// block holding this one, and its name (`A.B`).
        chain: Vec<(ScopeId, String)>,
        /// Each name another block of one of those namespaces exports, with the depth in
        /// `chain` of the innermost such namespace (TypeScript finds that one first).
        names: BTreeMap<String, usize>,
        found: Vec<OxcDiagnostic>,
    }
    impl<'a> oxc::ast_visit::Visit<'a> for Uses<'_> {
        // A namespace inside the block is a block of its own, checked on its own.
        fn visit_ts_namespace_declaration(&mut self, _: &TSNamespaceDeclaration<'a>) {}
        fn visit_identifier_reference(&mut self, it: &IdentifierReference<'a>) {
            let Some(&depth) = self.names.get(it.name.as_str()) else {
                return;
            };
            let Some(reference) = reference_of(self.scoping, it) else {
                return;
            };
            let own = self.chain.last().map(|(scope, _)| *scope);
            // Declared in this block (or deeper), the name is the block's own; declared in
            // a block holding this one, of that namespace or one nested in it, compiled
            // code sees it as TypeScript does.
            let seen = reference.symbol_id().is_some_and(|symbol| {
                let declared = self.scoping.symbol_scope_id(symbol);
                (self.scoping.scope_ancestors(declared)).any(|scope| Some(scope) == own)
                    || self.chain[depth..]
                        .iter()
                        .any(|(scope, _)| *scope == declared)
            });
            if reference.is_value() && !seen {
                let name = &it.name;
                let namespace = &self.chain[depth].1;
                let shared = if depth + 1 == self.chain.len() {
                    "with this block".to_string()
                } else {
                    let inner = &self.chain[self.chain.len() - 1].1;
                    format!("with `{inner}`, inside it")
                };
                self.found.push(
                    OxcDiagnostic::error(format!(
                        "`{name}` is exported by another block of namespace `{namespace}`; \
                         TypeScript shares it {shared}, but the compiled blocks do not share \
                         names: write `{namespace}.{name}`, or declare both in one block"
                    ))
                    .with_label(it.span),
                );
            }
        }
    }
    let mut blocks = Blocks {
        path: Vec::new(),
        within: Vec::new(),
        key: 0,
        keys: BTreeMap::new(),
        found: BTreeMap::new(),
    };
    for statement in &program.body {
        match statement {
            Statement::TSNamespaceDeclaration(it) => blocks.namespace(it, None),
            Statement::ExportDeclaration(export) => {
                if let Declaration::TSNamespaceDeclaration(it) = &export.declaration {
                    blocks.namespace(it, None);
                }
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    for (namespace, all) in blocks.found.values() {
        // A namespace of one block is still checked: an outer one may have others.
        for (i, block) in all.iter().enumerate() {
            // oxc merges an enum's declarations in one scope only: each block would set
            // `NS.K` to an enum of its own members, the last one winning.
            for (name, span) in &block.enums {
                let before = all[..i]
                    .iter()
                    .any(|other| other.enums.iter().any(|(n, _)| n == name));
                if before {
                    found.push(
                        OxcDiagnostic::error(format!(
                            "enum `{name}` is also declared in another block of namespace \
                             `{namespace}`: compiled, each block would make its own \
                             `{namespace}.{name}`, the last replacing the others; declare all \
                             its members in one block"
                        ))
                        .with_label(*span),
                    );
                }
            }
            // The names each namespace around this block exports from its other blocks,
            // the innermost namespace's winning.
            let mut names = BTreeMap::new();
            let mut chain = Vec::new();
            for (depth, (key, scope)) in block.chain.iter().enumerate() {
                let Some((name, outer)) = blocks.found.get(key) else {
                    continue;
                };
                chain.push((*scope, name.clone()));
                let others = (outer.iter())
                    .filter(|other| other.scope != block.chain[depth].1)
                    .flat_map(|other| other.exports.iter().cloned());
                for export in others {
                    names.insert(export, chain.len() - 1);
                }
            }
            let mut uses = Uses {
                scoping: semantic.scoping(),
                chain,
                names,
                found: Vec::new(),
            };
            if let Some(body) = block.body {
                oxc::ast_visit::Visit::visit_ts_module_block(&mut uses, body);
            }
            found.extend(uses.found);
        }
    }
    found.sort_by_key(primary_offset);
    found
}

/// `import x = require("…")` and `export = …` are CommonJS; oxc would turn
/// them into `require`/`module.exports`, which don't exist in an ES module.
/// Only the top level needs checking: elsewhere they are already errors.
fn commonjs_only_syntax(program: &Program<'_>) -> Vec<OxcDiagnostic> {
    let commonjs = |span: Span, what: &str, fix: &str| {
        OxcDiagnostic::error(format!(
            "{what} is CommonJS and cannot be used in an ES module; write {fix}"
        ))
        .with_label(span)
    };
    let mut found = Vec::new();
    for statement in &program.body {
        let import = match statement {
            Statement::TSExportAssignment(export) => {
                found.push(commonjs(export.span, "`export =`", "`export default …`"));
                continue;
            }
            Statement::TSImportEqualsDeclaration(import) => import,
            Statement::ExportDeclaration(export) => match &export.declaration {
                Declaration::TSImportEqualsDeclaration(import) => import,
                _ => continue,
            },
            _ => continue,
        };
        let TSModuleReference::ExternalModuleReference(required) = &import.module_reference else {
            continue;
        };
        if import.import_kind.is_value() {
            let (name, from) = (&import.id.name, &required.expression.value);
            let fix = format!(
                "`import {name} from {from:?}` (or `import * as {name} from {from:?}` for its \
                 named exports)"
            );
            found.push(commonjs(import.span, "`import … = require(…)`", &fix));
        }
    }
    found
}

/// `RegExp("…")` and `new RegExp("…", "…")` with literal arguments: V8 compiles the pattern
/// when the line runs, so a pattern it refuses throws a `SyntaxError` there every time.
/// Such patterns get the checks of a regular expression literal. `RegExp` must be the
/// global one; patterns built at run time are not looked at, nor are calls inside a `try`
/// block, which is how code asks whether the engine supports a pattern.
fn regexp_constructor_patterns(
    program: &Program<'_>,
    source: &str,
    semantic: &Semantic<'_>,
) -> Vec<OxcDiagnostic> {
    use oxc::ast::ast::{Argument, CallExpression, NewExpression};
    use oxc::regular_expression::{ConstructorParser, Options};
    struct Finder<'s> {
        scoping: &'s oxc::semantic::Scoping,
        source: &'s str,
        /// How many `try` blocks the walk is inside.
        tries: u32,
        found: Vec<OxcDiagnostic>,
    }
    impl Finder<'_> {
        fn check(&mut self, callee: &Expression<'_>, arguments: &[Argument<'_>]) {
            let Expression::Identifier(id) = callee.without_parentheses() else {
                return;
            };
            if self.tries > 0 {
                return;
            }
            let global = id
                .reference_id
                .get()
                .is_some_and(|r| self.scoping.get_reference(r).symbol_id().is_none());
            if id.name != "RegExp" || !global {
                return;
            }
            let literal = |argument: Option<&Argument<'_>>| match argument {
                Some(Argument::StringLiteral(s)) => Some(Some(s.span)),
                None => Some(None),
                Some(_) => None,
            };
            let (Some(Some(pattern)), Some(flags)) =
                (literal(arguments.first()), literal(arguments.get(1)))
            else {
                return;
            };
            let text = |span: Span| &self.source[span.start as usize..span.end as usize];
            let options = Options {
                pattern_span_offset: pattern.start,
                flags_span_offset: flags.map_or(0, |f| f.start),
            };
            let allocator = Allocator::default();
            let parsed =
                ConstructorParser::new(&allocator, text(pattern), flags.map(text), options).parse();
            match parsed {
                Ok(pattern) => self.found.extend(pattern_newer_than_node_20(&pattern)),
                Err(e) => self.found.push(e.with_help(
                    "node throws a SyntaxError each time this line runs; fix the pattern",
                )),
            }
        }
    }
    impl<'a> oxc::ast_visit::Visit<'a> for Finder<'_> {
        fn visit_new_expression(&mut self, it: &NewExpression<'a>) {
            self.check(&it.callee, &it.arguments);
            oxc::ast_visit::walk::walk_new_expression(self, it);
        }

        fn visit_call_expression(&mut self, it: &CallExpression<'a>) {
            self.check(&it.callee, &it.arguments);
            oxc::ast_visit::walk::walk_call_expression(self, it);
        }

        fn visit_try_statement(&mut self, it: &oxc::ast::ast::TryStatement<'a>) {
            walk_try_counted(self, it, |f| &mut f.tries);
        }
    }
    let mut finder = Finder {
        scoping: semantic.scoping(),
        source,
        tries: 0,
        found: Vec::new(),
    };
    oxc::ast_visit::Visit::visit_program(&mut finder, program);
    finder.found
}

/// Walks a `try` statement with `tries` (how many `try` blocks the walk is inside) one
/// higher in its block than in its `catch` and `finally`: code in the block is asking
/// whether the engine supports what it does.
fn walk_try_counted<'a, V: oxc::ast_visit::Visit<'a>>(
    v: &mut V,
    it: &oxc::ast::ast::TryStatement<'a>,
    tries: impl Fn(&mut V) -> &mut u32,
) {
    *tries(v) += 1;
    v.visit_block_statement(&it.block);
    *tries(v) -= 1;
    if let Some(handler) = &it.handler {
        v.visit_catch_clause(handler);
    }
    if let Some(finalizer) = &it.finalizer {
        v.visit_block_statement(finalizer);
    }
}

/// A call `ns.name(…)` or `new ns.Name(…)`, where `ns` is the namespace of a Node 20 builtin
/// (`import * as ns from "node:fs"`) and `name` is none of its exports there, throws a
/// TypeError each time the line runs: the name came with a later Node. Left alone: optional
/// calls, calls inside a `try` block, and names the file also reads otherwise
/// (`typeof fs.globSync === "function"`) or writes as a string (`"globSync" in fs`), which
/// is how code tests for them. A default
/// import (`import fs from "fs"`) is left alone too: it is the module's object, which has
/// more than its exports (`crypto.createCipher`, what `stream` inherits from `events`).
fn builtin_members_node_20_lacks(
    program: &Program<'_>,
    semantic: &Semantic<'_>,
) -> Vec<OxcDiagnostic> {
    use oxc::ast::ast::{
        CallExpression, ImportDeclarationSpecifier as S, NewExpression, StaticMemberExpression,
    };
    use oxc::semantic::SymbolId;
    use std::collections::{BTreeMap, HashMap, HashSet};
    /// What a namespace import of a builtin stands for.
    struct Module {
        local: String,
        name: &'static str,
        exports: &'static BTreeSet<&'static str>,
    }
    /// One `ns.name`, and whether it is called as such outside a `try` block.
    struct Access {
        span: Span,
        called: bool,
        tried: bool,
    }
    struct Finder<'s> {
        scoping: &'s oxc::semantic::Scoping,
        modules: &'s HashMap<SymbolId, Module>,
        /// Where the callee of a plain call or `new` starts.
        callees: HashSet<u32>,
        /// How many `try` blocks the walk is inside.
        tries: u32,
        accesses: BTreeMap<(SymbolId, String), Vec<Access>>,
        /// String literals of the file: `"globSync" in fs`, `Object.hasOwn(fs, "globSync")`
        /// and `fs["globSync"]` test for a name as `typeof fs.globSync` does.
        strings: HashSet<String>,
    }
    impl Finder<'_> {
        fn callee(&mut self, callee: &Expression<'_>) {
            if let Expression::StaticMemberExpression(m) = callee.without_parentheses() {
                self.callees.insert(m.span.start);
            }
        }
    }
    impl<'a> oxc::ast_visit::Visit<'a> for Finder<'_> {
        fn visit_call_expression(&mut self, it: &CallExpression<'a>) {
            if !it.optional {
                self.callee(&it.callee);
            }
            oxc::ast_visit::walk::walk_call_expression(self, it);
        }

        fn visit_new_expression(&mut self, it: &NewExpression<'a>) {
            self.callee(&it.callee);
            oxc::ast_visit::walk::walk_new_expression(self, it);
        }

        fn visit_static_member_expression(&mut self, it: &StaticMemberExpression<'a>) {
            if let Expression::Identifier(id) = it.object.without_parentheses() {
                let symbol = (id.reference_id.get())
                    .and_then(|r| self.scoping.get_reference(r).symbol_id())
                    .filter(|s| self.modules.contains_key(s));
                if let Some(symbol) = symbol {
                    let key = (symbol, it.property.name.to_string());
                    self.accesses.entry(key).or_default().push(Access {
                        span: it.property.span,
                        called: self.callees.contains(&it.span.start),
                        tried: self.tries > 0,
                    });
                }
            }
            oxc::ast_visit::walk::walk_static_member_expression(self, it);
        }

        fn visit_string_literal(&mut self, it: &oxc::ast::ast::StringLiteral<'a>) {
            self.strings.insert(it.value.to_string());
        }

        fn visit_try_statement(&mut self, it: &oxc::ast::ast::TryStatement<'a>) {
            walk_try_counted(self, it, |f| &mut f.tries);
        }
    }
    let mut modules = HashMap::new();
    for statement in &program.body {
        let Statement::ImportDeclaration(d) = statement else {
            continue;
        };
        let specifier = d.source.value.as_str();
        let (Some(name), Some(exports)) = (builtin_name(specifier), builtin_exports(specifier))
        else {
            continue;
        };
        if !d.import_kind.is_value() {
            continue;
        }
        for spec in d.specifiers.iter().flatten() {
            if let S::ImportNamespaceSpecifier(ns) = spec {
                if let Some(symbol) = ns.local.symbol_id.get() {
                    let local = ns.local.name.to_string();
                    let module = Module {
                        local,
                        name,
                        exports,
                    };
                    modules.insert(symbol, module);
                }
            }
        }
    }
    if modules.is_empty() {
        return Vec::new();
    }
    let mut finder = Finder {
        scoping: semantic.scoping(),
        modules: &modules,
        callees: HashSet::new(),
        tries: 0,
        accesses: BTreeMap::new(),
        strings: HashSet::new(),
    };
    oxc::ast_visit::Visit::visit_program(&mut finder, program);
    let mut found = Vec::new();
    for ((symbol, member), accesses) in &finder.accesses {
        let module = &modules[symbol];
        if module.exports.contains(member.as_str())
            || accesses.iter().any(|a| !a.called)
            || finder.strings.contains(member)
        {
            continue;
        }
        let (local, builtin) = (&module.local, module.name);
        let near = crate::event::nearest(member, module.exports.iter(), |e| e.to_string());
        let help = match near {
            Some(e) => format!("did you mean `{e}`?"),
            None => format!(
                "use what Node 20 has, or test for it first \
                 (`typeof {local}.{member} === \"function\"`)"
            ),
        };
        for access in accesses.iter().filter(|a| !a.tried) {
            let message = format!(
                "`{local}.{member}` is not in Node 20's `node:{builtin}`, which recipes run on: \
                 this call throws a TypeError there each time it runs"
            );
            let diagnostic = OxcDiagnostic::error(message).with_label(access.span);
            found.push((access.span.start, diagnostic.with_help(help.clone())));
        }
    }
    found.sort_by_key(|(at, _)| *at);
    found.into_iter().map(|(_, d)| d).collect()
}

/// The reference the semantic analysis made of the identifier `it`, once it has.
fn reference_of<'s>(
    scoping: &'s oxc::semantic::Scoping,
    it: &IdentifierReference<'_>,
) -> Option<&'s oxc::semantic::Reference> {
    it.reference_id.get().map(|id| scoping.get_reference(id))
}

/// `require`, `module`, `exports`, `__dirname` and `__filename` exist only in CommonJS: an
/// ES module that uses them without declaring them fails in node with a ReferenceError.
fn commonjs_globals(program: &Program<'_>, semantic: &Semantic<'_>) -> Vec<OxcDiagnostic> {
    struct Finder<'s> {
        scoping: &'s oxc::semantic::Scoping,
        found: Vec<OxcDiagnostic>,
    }
    impl<'a> oxc::ast_visit::Visit<'a> for Finder<'_> {
        // `typeof require` never throws: it is how code asks whether it runs as CommonJS.
        fn visit_unary_expression(&mut self, it: &oxc::ast::ast::UnaryExpression<'a>) {
            let asks = it.operator == oxc::ast::ast::UnaryOperator::Typeof
                && matches!(it.argument.without_parentheses(), Expression::Identifier(_));
            if !asks {
                oxc::ast_visit::walk::walk_unary_expression(self, it);
            }
        }

        fn visit_identifier_reference(&mut self, it: &IdentifierReference<'a>) {
            let fix = match it.name.as_str() {
                "require" => "import it instead (`import fs from \"node:fs\"`)",
                "module" | "exports" => "export it instead (`export function …`)",
                // `import.meta.dirname` needs Node 20.11; these run on any Node 20.
                "__dirname" => {
                    "use `dirname(fileURLToPath(import.meta.url))` (from \"node:path\" and \
                     \"node:url\") instead"
                }
                "__filename" => "use `fileURLToPath(import.meta.url)` (from \"node:url\") instead",
                _ => return,
            };
            let Some(reference) = reference_of(self.scoping, it) else {
                return;
            };
            // A `declare`d one (`declare const require: …`) still does not exist at run time.
            let undefined = match reference.symbol_id() {
                None => true,
                Some(symbol) => self.scoping.symbol_flags(symbol).is_ambient(),
            };
            if undefined && reference.is_value() {
                let message = format!(
                    "`{}` is CommonJS and does not exist in an ES module, which recipes are; \
                     {fix}",
                    it.name
                );
                self.found
                    .push(OxcDiagnostic::error(message).with_label(it.span));
            }
        }
    }
    let mut finder = Finder {
        scoping: semantic.scoping(),
        found: Vec::new(),
    };
    oxc::ast_visit::Visit::visit_program(&mut finder, program);
    finder.found
}

fn has_errors(diagnostics: &[OxcDiagnostic]) -> bool {
    diagnostics.iter().any(|d| d.severity == Severity::Error)
}

/// The JavaScript of `program`; with `map_to`, ending in an inline source map to that file.
fn print(program: &Program<'_>, map_to: Option<&Path>) -> String {
    let options = CodegenOptions {
        source_map_path: map_to.map(Path::to_path_buf),
        ..CodegenOptions::default()
    };
    let printed = Codegen::new().with_options(options).build(program);
    match printed.map {
        Some(map) => format!(
            "{}\n//# sourceMappingURL={}\n",
            printed.code.trim_end_matches('\n'),
            map.to_data_url()
        ),
        None => printed.code,
    }
}

/// Runs after the transformer, so that type-only imports are gone and
/// `rewrite` only sees runtime dependencies. Rewrites specifiers in place and
/// collects syntax that survived the transform but cannot run on Node 20.
struct OutputPass<'a, 'r> {
    builder: AstBuilder<'a>,
    rewrite: &'r mut dyn FnMut(&str) -> Resolution,
    problems: Vec<OxcDiagnostic>,
    purpose: Purpose,
}

impl<'a> OutputPass<'a, '_> {
    /// Asks `rewrite` about `specifier`, found at `span`: the replacement, if any; a refusal
    /// becomes a problem there. `untyped_json` is the import to write when the specifier
    /// names a JSON module without `with { type: "json" }`: one problem more when it
    /// resolves, and part of the refusal's message when it does not (one mistake, one
    /// error: the attribute of a file that is missing is no mistake of its own).
    fn resolve(
        &mut self,
        specifier: &str,
        span: Span,
        untyped_json: Option<String>,
    ) -> Option<String> {
        let (new, message) = match ((self.rewrite)(specifier), untyped_json) {
            (Ok(new), None) => return new,
            (Ok(new), Some(fix)) => (new, format!("{JSON_UNTYPED}: write `{fix}`")),
            (Err(why), None) => (None, format!("cannot resolve import `{specifier}`: {why}")),
            (Err(why), Some(fix)) => (
                None,
                format!(
                    "cannot resolve import `{specifier}`: {why}; the import needs its type \
                     as well, since {JSON_UNTYPED}: write `{fix}`"
                ),
            ),
        };
        self.problems.push(
            OxcDiagnostic::error(message)
                .with_error_code("hookpack", UNRESOLVED)
                .with_label(span),
        );
        new
    }

    /// Checks the attributes of a static import (or re-export) of `literal` and rewrites
    /// its specifier.
    fn static_import(&mut self, literal: &mut StringLiteral<'a>, with: Option<&WithClause<'a>>) {
        let (problems, untyped_json) = import_attributes(literal, with);
        self.problems.extend(problems);
        let fix =
            untyped_json.then(|| format!("from \"{}\" with {{ type: \"json\" }}", literal.value));
        if let Some(new) = self.resolve(literal.value.as_str(), literal.span, fix) {
            literal.value = Str::from_str_in(&new, &self.builder);
            // Codegen prints `raw` verbatim when present.
            literal.raw = None;
            literal.lone_surrogates = false;
        }
    }

    /// Whether `declaration` is an import of oxc's runtime helpers that the
    /// transformer added, in which case it is recorded as a problem.
    fn is_helper_import(&mut self, declaration: &ImportDeclaration<'a>) -> bool {
        let specifier = declaration.source.value.as_str();
        // Injected imports carry an empty span; a user's own import of the
        // same package keeps its real one.
        if !declaration.span.is_empty() || !specifier.starts_with(HELPER_MODULE) {
            return false;
        }
        let helper = specifier.rsplit('/').next().unwrap_or(specifier);
        self.problems.push(OxcDiagnostic::error(format!(
            "this file uses syntax that Node 20 lacks and that oxc can only lower with its \
             runtime helper `{helper}`, which a hook cannot import; avoid that syntax"
        )));
        true
    }
}

impl<'a> VisitMut<'a> for OutputPass<'a, '_> {
    fn visit_import_declaration(&mut self, it: &mut ImportDeclaration<'a>) {
        if !self.is_helper_import(it) {
            self.static_import(&mut it.source, it.with_clause.as_deref());
        }
    }

    fn visit_export_from_declaration(&mut self, it: &mut ExportFromDeclaration<'a>) {
        self.static_import(&mut it.source, it.with_clause.as_deref());
    }

    fn visit_export_all_declaration(&mut self, it: &mut ExportAllDeclaration<'a>) {
        self.static_import(&mut it.source, it.with_clause.as_deref());
    }

    fn visit_import_expression(&mut self, it: &mut ImportExpression<'a>) {
        // import(`./x.ts`) and import(("./x.ts")) are as static as import("./x.ts").
        // The string becomes a plain string literal (a template's text is never edited),
        // so we never have to escape the new specifier for a template.
        if let Some((span, old)) = static_specifier(&it.source) {
            // Its options may be any expression: only their absence is sure to fail.
            let fix = (old.ends_with(".json") && it.options.is_none())
                .then(|| format!("import(\"{old}\", {{ with: {{ type: \"json\" }} }})"));
            if let Some(new) = self.resolve(&old, span, fix) {
                let value = Str::from_str_in(&new, &self.builder);
                let literal = Expression::new_string_literal(span, value, None, &self.builder);
                replace_innermost(&mut it.source, literal);
            }
        } else {
            use oxc::span::GetSpan;
            let refuse =
                |why: &str| OxcDiagnostic::error(why.to_string()).with_label(it.source.span());
            match starts(&it.source) {
                // Shipped as it is: node resolves it when it runs, against files the tree
                // has; only a package named in full can be known to fail.
                None if self.purpose == Purpose::Check => {}
                None => self.problems.push(refuse(&format!(
                    "this computed import cannot be checked: it has more than {MOST_STARTS} \
                     possible values (each choice multiplies them); import each module with a \
                     string, e.g. `import(\"./handlers/a.ts\")` or `import(\"node:fs\")`"
                ))),
                Some(values)
                    if self.purpose == Purpose::Assemble
                        && values.iter().any(|(prefix, _)| could_be_relative(prefix)) =>
                {
                    self.problems.push(refuse(
                        "a computed import of a relative module cannot be assembled: only \
                         string specifiers are rewritten (`.ts` to `.js`) and their files \
                         shipped; import each module with a string, e.g. \
                         `import(\"./handlers/a.ts\")`",
                    ))
                }
                Some(values) => {
                    // A package chosen at run time (`import(c ? "lodash" : "node:fs")`,
                    // `` import(`lodash/${name}`) ``) fails there as surely as
                    // `import("lodash")`: each whole value gets the same check, and each
                    // partly known one must be able to become a builtin.
                    // Checking shipped code, a partly known relative path is node's to
                    // resolve (the whole ones are checked below).
                    // So is a `#` specifier (but for the `#/…` names node refuses) or a
                    // `data:` module.
                    let unknowable = |prefix: &str| {
                        self.purpose == Purpose::Check
                            && (could_be_relative(prefix)
                                || (prefix.starts_with('#') && !prefix.starts_with("#/"))
                                || starts_with_scheme(prefix, "data:"))
                    };
                    if let Some((prefix, _)) = values.iter().find(|(prefix, whole)| {
                        !whole && !could_be_builtin(prefix) && !unknowable(prefix)
                    }) {
                        let fails = match self.purpose {
                            Purpose::Assemble => "cannot be assembled",
                            Purpose::Check => "fails when it runs",
                        };
                        let why = if prefix.starts_with("#/") {
                            format!(
                                "a computed import of `{prefix}…` {fails}: node refuses `#` \
                                 alone, `#/…` and a name ending in `/` as import names; name \
                                 the import `#name` in the package.json's \"imports\""
                            )
                        } else if starts_with_scheme(prefix, "file:") {
                            format!(
                                "a computed import of `{prefix}…` {fails}: a `file:` URL names an \
                                 absolute path, not the folder the recipe is installed in; \
                                 import a relative path (`./…`)"
                            )
                        } else if prefix.starts_with("node:") {
                            format!(
                                "a computed import of `{prefix}…` {fails}: no built-in \
                                 module of Node 20, which recipes run on, starts so"
                            )
                        } else {
                            format!(
                                "a computed import of a package (`{prefix}…`) {fails}: \
                                 recipes run without node_modules; import Node built-ins as \
                                 `node:…` or a relative file"
                            )
                        };
                        self.problems
                            .push(refuse(&why).with_error_code("hookpack", UNRESOLVED));
                    }
                    for (value, _) in values.iter().filter(|(_, whole)| *whole) {
                        self.resolve(value, it.source.span(), None);
                    }
                }
            }
        }
        walk_mut::walk_import_expression(self, it);
    }

    /// Class auto-accessors (`accessor x = 1`) come with decorators, and Node 20 cannot
    /// parse them either.
    fn visit_accessor_property(&mut self, it: &mut AccessorProperty<'a>) {
        self.problems.push(
            OxcDiagnostic::error(
                "`accessor` fields are not supported by Node 20; write a private field with a \
                 getter and a setter",
            )
            .with_label(it.span),
        );
        walk_mut::walk_accessor_property(self, it);
    }

    /// oxc leaves decorators in place at this target (lowering them would need
    /// its runtime helpers), and Node 20 cannot parse them.
    fn visit_decorator(&mut self, it: &mut Decorator<'a>) {
        self.problems.push(
            OxcDiagnostic::error(
                "decorators are not supported by Node 20 (nor compiled here: that would need \
                 a runtime helper a hook cannot import); call the function the decorator names \
                 yourself, after the class (for a method: `C.prototype.m = log(C.prototype.m)`)",
            )
            .with_label(it.span),
        );
        walk_mut::walk_decorator(self, it);
    }
}

/// What node refuses in the attributes of a static import of `source`: a JSON module must
/// be imported `with { type: "json" }` (ERR_IMPORT_ASSERTION_TYPE_MISSING), nothing else may
/// be (ERR_IMPORT_ASSERTION_TYPE_FAILED), Node 20 knows no other type
/// (ERR_IMPORT_ASSERTION_TYPE_UNSUPPORTED) and no other attribute
/// (ERR_IMPORT_ATTRIBUTE_UNSUPPORTED). Whether a module is JSON is told by its specifier,
/// as assemble resolves only `.json` specifiers to JSON files. A JSON module imported
/// without the attribute is not among the problems, but said by the `bool`, since whether
/// the module is there belongs in the same message.
fn import_attributes(
    source: &StringLiteral<'_>,
    with: Option<&WithClause<'_>>,
) -> (Vec<OxcDiagnostic>, bool) {
    let refuse = |message: String, span: Span| {
        OxcDiagnostic::error(message)
            .with_label(span)
            .with_error_code("hookpack", UNRESOLVED)
    };
    let json = source.value.ends_with(".json");
    let mut typed = false;
    let mut found = Vec::new();
    for a in with.iter().flat_map(|w| w.with_entries.iter()) {
        let (key, key_span) = match &a.key {
            ImportAttributeKey::Identifier(k) => (k.name.as_str(), k.span),
            ImportAttributeKey::StringLiteral(k) => (k.value.as_str(), k.span),
        };
        if key != "type" {
            found.push(refuse(
                format!("Node 20 supports no import attribute but `type`; remove `{key}`"),
                key_span,
            ));
        } else if a.value.value != "json" {
            found.push(refuse(
                format!(
                    "Node 20 imports no module of type `{}`; JSON modules are imported `with \
                     {{ type: \"json\" }}`, others without attributes",
                    a.value.value
                ),
                a.value.span,
            ));
        } else if json {
            typed = true;
        } else {
            found.push(refuse(
                format!(
                    "`{}` is not a JSON module, and node refuses to load it as one; remove \
                     `with {{ type: \"json\" }}`",
                    source.value
                ),
                a.value.span,
            ));
        }
    }
    let untyped = json && !typed && found.is_empty();
    (found, untyped)
}

/// Why a JSON module imported without `with { type: "json" }` fails
/// (ERR_IMPORT_ASSERTION_TYPE_MISSING).
const JSON_UNTYPED: &str = "node loads a JSON module only when its import says so";

/// The specifier of `import(e)` when `e` is one string: a literal or a template without
/// substitutions, possibly in parentheses, a TypeScript-only wrapper or at the end of a
/// sequence.
fn static_specifier(e: &Expression<'_>) -> Option<(oxc::span::Span, String)> {
    match e {
        Expression::StringLiteral(s) => Some((s.span, s.value.as_str().to_string())),
        Expression::TemplateLiteral(t) => t.single_quasi().map(|q| (t.span, q.to_string())),
        _ => unwrapped(e).and_then(static_specifier),
    }
}

/// Puts `new` where the string [`static_specifier`] found in `e` is: what wraps it stays,
/// and so do the expressions before it in a sequence, which may have effects.
fn replace_innermost<'a>(e: &mut Expression<'a>, new: Expression<'a>) {
    match e {
        Expression::ParenthesizedExpression(p) => replace_innermost(&mut p.expression, new),
        Expression::SequenceExpression(s) => {
            if let Some(last) = s.expressions.last_mut() {
                replace_innermost(last, new)
            }
        }
        Expression::TSAsExpression(x) => replace_innermost(&mut x.expression, new),
        Expression::TSSatisfiesExpression(x) => replace_innermost(&mut x.expression, new),
        Expression::TSNonNullExpression(x) => replace_innermost(&mut x.expression, new),
        Expression::TSTypeAssertion(x) => replace_innermost(&mut x.expression, new),
        _ => *e = new,
    }
}

/// Whether a value starting with `prefix` may name a relative module: `./`, `../` (no
/// package name and no `node:` builtin starts with a dot), as in
/// `` import(`./handlers/${name}.ts`) `` or `import(fast ? "./a.ts" : "./b.ts")`. Assemble
/// can neither rewrite such an import nor know which files it needs.
/// Whether `text` starts with the URL scheme `scheme` (`"file:"`), read in any case as
/// URLs are.
pub(crate) fn starts_with_scheme(text: &str, scheme: &str) -> bool {
    text.get(..scheme.len())
        .is_some_and(|s| s.eq_ignore_ascii_case(scheme))
}

fn could_be_relative(prefix: &str) -> bool {
    prefix.starts_with('.')
}

/// Whether a value starting with `prefix` (and not all of it) may still name a Node
/// builtin, or a file by absolute path: what is not known yet may complete it.
fn could_be_builtin(prefix: &str) -> bool {
    match prefix.strip_prefix("node:") {
        Some(rest) => prefixed_builtins().any(|name| name.starts_with(rest)),
        None => prefix.starts_with('/') || unprefixed_builtins().any(|n| n.starts_with(prefix)),
    }
}

/// The expression whose value `e` has: inside parentheses or a TypeScript-only wrapper
/// (`as`, `satisfies`, `!`), or the last of a sequence (`(0, "./x.ts")`).
fn unwrapped<'e, 'a>(e: &'e Expression<'a>) -> Option<&'e Expression<'a>> {
    match e {
        Expression::ParenthesizedExpression(p) => Some(&p.expression),
        Expression::SequenceExpression(s) => s.expressions.last(),
        Expression::TSAsExpression(x) => Some(&x.expression),
        Expression::TSSatisfiesExpression(x) => Some(&x.expression),
        Expression::TSNonNullExpression(x) => Some(&x.expression),
        Expression::TSTypeAssertion(x) => Some(&x.expression),
        _ => None,
    }
}

/// Most distinct ways a computed specifier's values may start that are checked; an import
/// with more is refused, since what it may load cannot be told.
const MOST_STARTS: usize = 64;
/// Most bytes of each possible value that are followed: plenty to tell a relative path, a
/// builtin or a package name apart. A longer value counts as cut short (not whole), which
/// also bounds the work on long chains of concatenations.
const LONGEST_START: usize = 256;

/// Ways the values of a computed specifier can start: each text, and whether it is all of
/// the value.
type Starts = BTreeSet<(String, bool)>;

/// The texts the values of `e` can start with (one per branch of a condition), each with
/// whether it is all of the value; `None` when there are more than [`MOST_STARTS`]. Each
/// part of `e` is looked at at most once and each text is at most [`LONGEST_START`] bytes,
/// so this takes time in proportion to `e`.
fn starts(e: &Expression<'_>) -> Option<Starts> {
    let cooked = |q: &oxc::ast::ast::TemplateElement<'_>| {
        q.value.cooked.unwrap_or(q.value.raw).as_str().to_string()
    };
    let bounded = |set: Starts| (set.len() <= MOST_STARTS).then_some(set);
    let one = |mut text: String, mut whole: bool| {
        if text.len() > LONGEST_START {
            let mut end = LONGEST_START;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
            whole = false;
        }
        (text, whole)
    };
    // The ways a value that is one of `a` or `b` can start.
    let either = |a: &Expression<'_>, b: &Expression<'_>| {
        let mut out = starts(a)?;
        out.extend(starts(b)?);
        bounded(out)
    };
    // Every way `left` then `right` can start, given how each can; `right` is only looked
    // at when some value of `left` is whole.
    let join = |left: Starts, right: &dyn Fn() -> Option<Starts>| {
        if left.iter().all(|(_, whole)| !whole) {
            return Some(left);
        }
        let right = right()?;
        let mut out = BTreeSet::new();
        for (l, whole) in left {
            if !whole {
                out.insert((l, false));
                continue;
            }
            for (r, w) in &right {
                out.insert(one(format!("{l}{r}"), *w));
            }
        }
        bounded(out)
    };
    let single = |text: String| Some(BTreeSet::from([one(text, true)]));
    match e {
        Expression::StringLiteral(s) => single(s.value.as_str().to_string()),
        Expression::TemplateLiteral(t) => {
            let mut out = single(t.quasis.first().map(cooked).unwrap_or_default())?;
            for (i, inner) in t.expressions.iter().enumerate() {
                out = join(out, &|| starts(inner))?;
                let next = t.quasis.get(i + 1).map(cooked).unwrap_or_default();
                out = join(out, &|| single(next.clone()))?;
            }
            Some(out)
        }
        Expression::BinaryExpression(b) if b.operator == BinaryOperator::Addition => {
            join(starts(&b.left)?, &|| starts(&b.right))
        }
        Expression::ConditionalExpression(c) => either(&c.consequent, &c.alternate),
        Expression::LogicalExpression(l) => either(&l.left, &l.right),
        _ => match unwrapped(e) {
            Some(inner) => starts(inner),
            None => Some(BTreeSet::from([(String::new(), false)])),
        },
    }
}

/// Turns byte offsets into 1-based line and character columns.
///
/// Lines end at `\n`, `\r\n`, `\r`, U+2028 and U+2029, as in ECMAScript and
/// `tsc`, so positions agree with what TypeScript tooling reports.
struct Locator<'s> {
    source: &'s str,
    line_starts: Vec<usize>,
}

impl<'s> Locator<'s> {
    fn new(source: &'s str) -> Self {
        let mut line_starts = vec![0];
        let mut chars = source.char_indices().peekable();
        while let Some((offset, ch)) = chars.next() {
            let ends_line = match ch {
                '\r' => chars.peek().is_none_or(|&(_, next)| next != '\n'),
                '\n' | '\u{2028}' | '\u{2029}' => true,
                _ => false,
            };
            if ends_line {
                line_starts.push(offset + ch.len_utf8());
            }
        }
        Self {
            source,
            line_starts,
        }
    }

    fn position(&self, offset: usize) -> (u32, u32) {
        let mut offset = offset.min(self.source.len());
        while !self.source.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.line_starts.partition_point(|&start| start <= offset) - 1;
        let column = self.source[self.line_starts[line]..offset].chars().count();
        (to_u32(line + 1), to_u32(column + 1))
    }

    fn diagnostic(&self, offset: usize, message: String, rule: &'static str) -> TsDiagnostic {
        let (line, column) = self.position(offset);
        TsDiagnostic {
            line,
            column,
            message,
            rule,
        }
    }

    fn convert(&self, diagnostics: Vec<OxcDiagnostic>) -> Vec<TsDiagnostic> {
        let mut converted: Vec<TsDiagnostic> = diagnostics
            .into_iter()
            .map(|d| {
                let offset = primary_offset(&d).unwrap_or(0);
                let mut message = d.message.to_string();
                if let Some(help) = &d.help {
                    message.push_str("\nhelp: ");
                    message.push_str(help);
                } else if let Some(told) = self.unexpected_token(&d) {
                    message = told;
                }
                let unresolved = d.code.number.as_deref() == Some(UNRESOLVED);
                let rule = if unresolved { UNRESOLVED } else { "typescript" };
                self.diagnostic(offset, message, rule)
            })
            .collect();
        // Parser, semantic and our own checks each report in their own
        // order; the caller gets one list in source order.
        converted.sort_by_key(|d| (d.line, d.column));
        converted
    }
}

impl Locator<'_> {
    /// oxc's bare "Unexpected token", with the token it met and where to look for the fault.
    fn unexpected_token(&self, d: &OxcDiagnostic) -> Option<String> {
        if d.message != "Unexpected token" {
            return None;
        }
        let label = d
            .labels
            .iter()
            .find(|l| l.primary())
            .or_else(|| d.labels.first())?;
        let start = usize::try_from(label.offset()).ok()?;
        let len = usize::try_from(label.len()).ok()?;
        let text = self.source.get(start..start.checked_add(len)?)?.trim();
        if text.is_empty() || text.chars().count() > 40 || text.contains('`') {
            return None;
        }
        Some(format!(
            "Unexpected token `{text}`\nhelp: it cannot stand here; what comes just before it is \
             unfinished or has one thing too many (look for a missing value, operand, comma or \
             closing bracket)"
        ))
    }
}

fn primary_offset(diagnostic: &OxcDiagnostic) -> Option<usize> {
    let labels = &diagnostic.labels;
    let label = labels
        .iter()
        .find(|l| l.primary())
        .or_else(|| labels.first())?;
    usize::try_from(label.offset()).ok()
}

fn at_start(message: String) -> TsDiagnostic {
    TsDiagnostic {
        line: 1,
        column: 1,
        message,
        rule: "typescript",
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::relative_url;

    #[test]
    fn a_relative_url_is_read_as_against_a_file_base() {
        for (url, rest) in [
            ("x.json", "x.json"),
            ("./x", "./x"),
            ("../x", "../x"),
            ("a/b.txt", "a/b.txt"),
            ("1:x", "1:x"),
            ("a b.txt", "a b.txt"),
            ("%2e%2e/x", "%2e%2e/x"),
            ("file:words.txt", "words.txt"),
            ("FILE:../x", "../x"),
            ("file:c|x", "c|x"),
            ("./c|/x", "./c|/x"),
            ("sub\\x.txt", "sub\\x.txt"),
            ("x.txt?raw", "x.txt?raw"),
        ] {
            assert_eq!(relative_url(url), Some(rest), "{url:?}");
        }
        for url in [
            "",
            "/etc/hostname",
            "//host/x",
            "\\x",
            "https://example.com/x",
            "data:text/plain,hi",
            "node:fs",
            "file:",
            "file:/x",
            "file:\\x",
            "C:/x",
            "c|/x",
            "c|",
            "file:c:/x",
            " x",
            "x\n",
            "a\tb",
        ] {
            assert_eq!(relative_url(url), None, "{url:?}");
        }
    }
}
