//! `cargo xtask`: builds what `scripts/run` serves, without cargo-leptos.
//!
//! The site is three steps cargo-leptos used to run for us: compile the
//! `frontend` crate to WASM, generate its JavaScript glue with wasm-bindgen
//! (linked in as a library, so nothing is installed), and, for release
//! builds, shrink the bundle with binaryen's `wasm-opt` (from npm). The CSS
//! and the `public/` assets are copied beside it. docs/building.md weighs
//! this against cargo-leptos.
//!
//! Every cargo invocation here uses the workspace's one target directory and
//! the same environment as `cargo test`, so a debug site built after the
//! tests compiles only the WASM crates.

use anyhow::{bail, Context, Result};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Instant, UNIX_EPOCH};

/// The bundle's file stem: the server's hydration scripts ask for
/// `/pkg/kandev-recovery.js` and `/pkg/kandev-recovery.wasm` (leptos drops
/// wasm-bindgen's `_bg` suffix when the output name is set at compile time,
/// as .cargo/config.toml does).
const OUTPUT_NAME: &str = "kandev-recovery";
const SITE_ROOT: &str = "target/site";
const WASM_TARGET: &str = "wasm32-unknown-unknown";
/// The release bundle's size profile (Cargo.toml, `[profile.wasm-release]`).
const WASM_RELEASE_PROFILE: &str = "wasm-release";
/// What `wasm-opt` does to the release bundle: size first, with the two
/// features Rust's wasm32 target emits, repeated until the passes stop
/// paying, knowing the first kilobyte of memory is never addressed (the
/// stack starts at 1 MB and grows down to it only on overflow).
const WASM_OPT_ARGS: &[&str] = &[
    "-Oz",
    "--enable-bulk-memory",
    "--enable-nontrapping-float-to-int",
    "--converge",
    "--low-memory-unused",
];

const USAGE: &str = "\
cargo xtask: build the web app and the server without cargo-leptos

Usage:
  cargo xtask site  [--release]            the browser bundle, CSS and assets into target/site
  cargo xtask build [--release]            the site, then the kandev-recovery binary
  cargo xtask serve [--release] [ARGS...]  build, then run `kandev-recovery ARGS...`
                                           (the server; ARGS may be a subcommand such as `demo`)

Debug builds skip wasm-opt and keep the WASM's debug names; --release builds
the bundle with the size profile and shrinks it with binaryen's wasm-opt
(scripts/setup installs it from npm into xtask/node_modules).";

fn main() {
    if let Err(e) = run(std::env::args_os().skip(1).collect()) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Debug,
    Release,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Debug => "debug",
            Mode::Release => "release",
        }
    }
}

fn run(args: Vec<OsString>) -> Result<()> {
    let mut args = args.into_iter();
    let Some(task) = args.next() else {
        println!("{USAGE}");
        bail!("no task given");
    };
    let task = task.to_string_lossy().into_owned();
    if matches!(task.as_str(), "-h" | "--help" | "help") {
        println!("{USAGE}");
        return Ok(());
    }
    // `--release` is ours only before any server argument.
    let mut rest: Vec<OsString> = args.collect();
    let mode = if rest.first().is_some_and(|a| a == "--release") {
        rest.remove(0);
        Mode::Release
    } else {
        Mode::Debug
    };
    if rest.first().is_some_and(|a| a == "--") {
        rest.remove(0);
    }
    std::env::set_current_dir(workspace_root()).context("cannot enter the workspace root")?;
    match task.as_str() {
        "site" | "build" if !rest.is_empty() => {
            bail!("`cargo xtask {task}` takes only --release (got {rest:?}); see `cargo xtask --help`")
        }
        "site" => site(mode),
        "build" => {
            site(mode)?;
            server(mode)
        }
        "serve" => {
            site(mode)?;
            server(mode)?;
            serve(mode, rest)
        }
        other => bail!("unknown task `{other}`; see `cargo xtask --help`"),
    }
}

/// The workspace root: this crate's parent directory.
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives inside the workspace")
        .to_path_buf()
}

/// Prints a step's heading; the returned guard prints how long it took.
fn step(what: String) -> Step {
    eprintln!("\x1b[1m==> {what}\x1b[0m");
    Step {
        what,
        started: Instant::now(),
    }
}

struct Step {
    what: String,
    started: Instant,
}

impl Drop for Step {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            eprintln!(
                "    {} took {:.1} s",
                self.what,
                self.started.elapsed().as_secs_f64()
            );
        }
    }
}

/// `cargo` with the environment every build of this workspace shares.
fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    // leptos_config reads the output name at compile time; .cargo/config.toml
    // sets it for every build, this keeps an outer environment from
    // disagreeing with it (which would rebuild everything above leptos).
    cmd.env("LEPTOS_OUTPUT_NAME", OUTPUT_NAME);
    cmd
}

fn check(cmd: &mut Command) -> Result<()> {
    let status = cmd
        .status()
        .with_context(|| format!("cannot start {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} failed ({status})");
    }
    Ok(())
}

/// Builds the browser bundle into `target/site/pkg` and copies the CSS and
/// the public assets into `target/site`.
fn site(mode: Mode) -> Result<()> {
    let wasm = frontend(mode)?;
    let pkg = Path::new(SITE_ROOT).join("pkg");
    std::fs::create_dir_all(&pkg).with_context(|| format!("cannot create {}", pkg.display()))?;
    bindgen(mode, &wasm, &pkg)?;
    std::fs::copy("style/main.css", pkg.join(format!("{OUTPUT_NAME}.css")))
        .context("cannot copy style/main.css into the site")?;
    copy_dir(Path::new("public"), Path::new(SITE_ROOT))?;
    Ok(())
}

/// Compiles the `frontend` crate to WASM; answers the module's path.
fn frontend(mode: Mode) -> Result<PathBuf> {
    let _step = step(format!("compiling the browser bundle ({})", mode.name()));
    let mut cmd = cargo();
    cmd.args(["build", "-p", "frontend", "--lib", "--target", WASM_TARGET]);
    let profile_dir = match mode {
        Mode::Debug => "debug",
        Mode::Release => {
            cmd.args(["--profile", WASM_RELEASE_PROFILE]);
            WASM_RELEASE_PROFILE
        }
    };
    check(&mut cmd).context(
        "the WASM build failed (is the target installed? `rustup target add wasm32-unknown-unknown`)",
    )?;
    Ok(Path::new("target")
        .join(WASM_TARGET)
        .join(profile_dir)
        .join("frontend.wasm"))
}

/// Generates the JavaScript glue and the final `.wasm` next to it, then
/// shrinks a release bundle with `wasm-opt`. Skipped when the compiled
/// module is the one the site was last generated from, so a second
/// `scripts/run` does not spend half a minute in wasm-opt again.
fn bindgen(mode: Mode, wasm: &Path, pkg: &Path) -> Result<()> {
    let meta = std::fs::metadata(wasm).with_context(|| format!("no {}", wasm.display()))?;
    let modified = meta
        .modified()?
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let stamp_text = format!(
        "{} {} {} {modified}\n",
        mode.name(),
        wasm.display(),
        meta.len()
    );
    let stamp = pkg.join(".built-from");
    let out_wasm = pkg.join(format!("{OUTPUT_NAME}.wasm"));
    let out_js = pkg.join(format!("{OUTPUT_NAME}.js"));
    if out_wasm.exists()
        && out_js.exists()
        && std::fs::read_to_string(&stamp).is_ok_and(|s| s == stamp_text)
    {
        eprintln!(
            "==> the browser bundle is up to date ({})",
            out_wasm.display()
        );
        return Ok(());
    }
    // A half-written site must not look current if a later step fails.
    let _ = std::fs::remove_file(&stamp);
    {
        let _step = step("generating the JavaScript glue (wasm-bindgen)".into());
        wasm_bindgen_cli_support::Bindgen::new()
            .input_path(wasm)
            .out_name(OUTPUT_NAME)
            .web(true)?
            .typescript(false)
            .keep_debug(mode == Mode::Debug)
            .generate(pkg)
            .context("wasm-bindgen could not process the bundle")?;
        std::fs::rename(pkg.join(format!("{OUTPUT_NAME}_bg.wasm")), &out_wasm)?;
    }
    if mode == Mode::Release {
        let _step = step("shrinking the bundle (wasm-opt -Oz)".into());
        let before = std::fs::metadata(&out_wasm)?.len();
        let tmp = pkg.join(format!("{OUTPUT_NAME}.opt.wasm"));
        let mut cmd = Command::new(wasm_opt()?);
        cmd.args(WASM_OPT_ARGS).arg(&out_wasm).arg("-o").arg(&tmp);
        check(&mut cmd)?;
        std::fs::rename(&tmp, &out_wasm)?;
        let after = std::fs::metadata(&out_wasm)?.len();
        eprintln!("    {} KB → {} KB", before / 1024, after / 1024);
    }
    std::fs::write(&stamp, stamp_text)?;
    Ok(())
}

/// binaryen's `wasm-opt` from npm (xtask/node_modules, installed by
/// scripts/setup), else one on PATH. Debian's is too old: its output
/// breaks hydration.
fn wasm_opt() -> Result<PathBuf> {
    let local = Path::new("xtask/node_modules/.bin/wasm-opt");
    if local.exists() {
        return Ok(local.to_path_buf());
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("wasm-opt"))
        .find(|p| p.is_file())
        .context(
            "wasm-opt not found: run scripts/setup (it installs binaryen from npm into xtask/node_modules)",
        )
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    for entry in
        std::fs::read_dir(from).with_context(|| format!("cannot read {}", from.display()))?
    {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            std::fs::create_dir_all(&target)?;
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target).with_context(|| {
                format!(
                    "cannot copy {} to {}",
                    entry.path().display(),
                    target.display()
                )
            })?;
        }
    }
    Ok(())
}

/// Compiles the `kandev-recovery` binary.
fn server(mode: Mode) -> Result<()> {
    let _step = step(format!("compiling the server ({})", mode.name()));
    let mut cmd = cargo();
    cmd.args(["build", "-p", "server", "--bin", "kandev-recovery"]);
    if mode == Mode::Release {
        cmd.arg("--release");
    }
    check(&mut cmd)
}

/// Replaces this process with the server, so a terminal's Ctrl-C and a
/// supervisor's SIGTERM reach it directly.
fn serve(mode: Mode, args: Vec<OsString>) -> Result<()> {
    let bin = Path::new("target")
        .join(mode.name())
        .join("kandev-recovery");
    let mut cmd = Command::new(&bin);
    cmd.args(args).env("LEPTOS_SITE_ROOT", SITE_ROOT);
    exec(cmd).with_context(|| format!("cannot run {}", bin.display()))
}

#[cfg(unix)]
fn exec(mut cmd: Command) -> Result<()> {
    use std::os::unix::process::CommandExt;
    Err(cmd.exec().into())
}

#[cfg(not(unix))]
fn exec(mut cmd: Command) -> Result<()> {
    let status = cmd.status()?;
    std::process::exit(status.code().unwrap_or(1));
}
