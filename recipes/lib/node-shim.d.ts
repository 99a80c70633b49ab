// Minimal ambient declarations for the few Node 20 built-ins the recipes use.
// We deliberately avoid @types/node (no npm dependencies in this tree); this
// file is for the type checker only and holds no runtime code. Assemblers
// should skip `*.d.ts` files when copying lib/ into scripts/lib/.

interface ImportMeta {
  readonly url: string;
}

declare class URL {
  constructor(input: string, base?: string | URL);
  readonly href: string;
  readonly pathname: string;
  toString(): string;
}

declare class TextEncoder {
  encode(input: string): Uint8Array;
}

interface HookpackWritable {
  write(chunk: string): boolean;
}

interface HookpackReadable {
  setEncoding(encoding: "utf8"): void;
  [Symbol.asyncIterator](): AsyncIterator<string>;
}

interface HookpackProcess {
  readonly env: Record<string, string | undefined>;
  readonly stdin: HookpackReadable;
  readonly stdout: HookpackWritable;
  readonly stderr: HookpackWritable;
  readonly platform: string;
  exitCode: number | undefined;
  cwd(): string;
}

declare module "node:process" {
  const process: HookpackProcess;
  export default process;
}

interface HookpackStats {
  readonly mode: number;
  isFile(): boolean;
}

declare module "node:fs" {
  export function readFileSync(path: string | URL, encoding: "utf8"): string;
  export function statSync(path: string): HookpackStats;
  export function mkdirSync(path: string, options: { recursive: true; mode?: number }): string | undefined;
  export function appendFileSync(path: string, data: string, options: "utf8" | { encoding: "utf8"; mode?: number }): void;
}

declare module "node:path" {
  export const sep: string;
  export function resolve(...segments: string[]): string;
  export function dirname(path: string): string;
  export function basename(path: string): string;
  export function join(...segments: string[]): string;
  export function isAbsolute(path: string): boolean;
}

declare module "node:os" {
  export function homedir(): string;
}

declare module "node:url" {
  export function fileURLToPath(url: string | URL): string;
}
