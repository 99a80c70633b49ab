//! Integration tests: the real `hookpack` binary, each test in its own temporary folder.

#[path = "integration/assemble.rs"]
mod assemble;
#[path = "integration/catalog.rs"]
mod catalog;
#[path = "integration/common.rs"]
mod common;
#[path = "integration/consistency.rs"]
mod consistency;
#[path = "integration/errors.rs"]
mod errors;
#[path = "integration/faults.rs"]
mod faults;
#[path = "integration/host.rs"]
mod host;
#[path = "integration/hostile.rs"]
mod hostile;
#[path = "integration/install.rs"]
mod install;
#[path = "integration/leftovers.rs"]
mod leftovers;
#[path = "integration/new.rs"]
mod new;
#[path = "integration/nginx.rs"]
mod nginx;
#[path = "integration/pack.rs"]
mod pack;
#[path = "integration/properties.rs"]
mod properties;
#[path = "integration/recipes.rs"]
mod recipes;
#[path = "integration/schemas.rs"]
mod schemas;
#[path = "integration/typescript.rs"]
mod typescript;
#[path = "integration/validate.rs"]
mod validate;
