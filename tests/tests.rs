//! Integration tests: the real `hookpack` binary, each test in its own temporary folder.

#[path = "integration/common.rs"]
mod common;
#[path = "integration/new.rs"]
mod new;
#[path = "integration/schemas.rs"]
mod schemas;
#[path = "integration/typescript.rs"]
mod typescript;
#[path = "integration/validate.rs"]
mod validate;
