//! `kandev-recovery token create|list|revoke` and `user add|list|disable|
//! enable|remove|grant|revoke|link`. Nothing here logs: a
//! token's secret goes to stdout once, and nowhere else.

use super::{Access, Permissions};
use crate::clock::Clock;
use crate::config::{TokenCommand, UserCommand};
use crate::http::redact_url;
use crate::store::{self, StoreError};
use std::process::ExitCode;

/// Runs one `token` subcommand.
pub fn run_token(command: TokenCommand) -> ExitCode {
    block_on(token(command))
}

/// Runs one `user` subcommand.
pub fn run_user(command: UserCommand) -> ExitCode {
    block_on(user(command))
}

fn block_on(work: impl std::future::Future<Output = Result<(), String>>) -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    // What an operator changes here is audited as theirs.
    let work = crate::audit::acting(crate::audit::command_line(), work);
    match runtime.block_on(work) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// A token's or a person's name, trimmed: 1 to 100 characters, none of
/// them hidden (names are shown in pages, logs and `token list`).
fn checked_name<'n>(what: &str, name: &'n str) -> Result<&'n str, String> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(format!("{what} must be 1 to 100 characters"));
    }
    domain::policy::text::check_visible(what, name).map_err(|e| format!("{what} {}", e.message))?;
    Ok(name)
}

async fn open(url: &str) -> Result<Access, String> {
    let store = store::connect(url)
        .await
        .map_err(|e| format!("cannot open the database at {}: {e}", redact_url(url)))?;
    Ok(Access::new(store, Clock::system(), false))
}

async fn token(command: TokenCommand) -> Result<(), String> {
    match command {
        TokenCommand::Create {
            name,
            permissions,
            database,
        } => {
            let name = checked_name("--name", &name)?;
            let access = open(&database.database_url).await?;
            let made = access
                .create_token(name, permissions)
                .await
                .map_err(|e| match e {
                    StoreError::AlreadyExists => format!(
                        "a live token is already named `{name}`; revoke it first or pick another name"
                    ),
                    e => format!("cannot create the token: {e}"),
                })?;
            println!(
                "Created token `{}` (id {}) with {}.",
                made.row.name,
                made.row.id,
                describe(&made.row.permissions)
            );
            println!(
                "Copy it now; it is not shown again. Send it as `Authorization: Bearer <token>`:"
            );
            println!("{}", made.secret);
            Ok(())
        }
        TokenCommand::List { database } => {
            let access = open(&database.database_url).await?;
            let tokens = access
                .list_tokens()
                .await
                .map_err(|e| format!("cannot list tokens: {e}"))?;
            if tokens.is_empty() {
                println!("No tokens yet; create one with `kandev-recovery token create`.");
                return Ok(());
            }
            println!(
                "{:<32}  {:<24}  {:<20}  {:<8}  PERMISSIONS",
                "ID", "NAME", "CREATED (UTC)", "STATE"
            );
            for t in tokens {
                println!(
                    "{:<32}  {:<24}  {:<20}  {:<8}  {}",
                    t.id,
                    t.name,
                    time(t.created_at_ms),
                    if t.revoked_at_ms.is_some() {
                        "revoked"
                    } else {
                        "live"
                    },
                    t.permissions
                );
            }
            Ok(())
        }
        TokenCommand::Revoke { token, database } => {
            let access = open(&database.database_url).await?;
            let revoked = access
                .revoke_token(token.trim())
                .await
                .map_err(|e| format!("cannot revoke the token: {e}"))?;
            if revoked.is_empty() {
                return Err(format!(
                    "no live token has the name or id `{token}`; `kandev-recovery token list` shows them"
                ));
            }
            for t in revoked {
                println!("Revoked token `{}` (id {}).", t.name, t.id);
            }
            Ok(())
        }
    }
}

async fn user(command: UserCommand) -> Result<(), String> {
    match command {
        UserCommand::Add {
            name,
            permissions,
            url,
            database,
        } => {
            let name = checked_name("the name", &name)?;
            let base = url.trim_end_matches('/');
            if !(base.starts_with("http://") || base.starts_with("https://")) {
                return Err(format!(
                    "--url must be an http:// or https:// address, not `{url}`"
                ));
            }
            let access = open(&database.database_url).await?;
            let user = access
                .create_user(name, permissions)
                .await
                .map_err(|e| match e {
                    StoreError::AlreadyExists => format!("a user is already named `{name}`"),
                    e => format!("cannot add the user: {e}"),
                })?;
            let path = access
                .sign_in_path(&user)
                .await
                .map_err(|e| format!("cannot make the sign-in link: {e}"))?;
            println!(
                "Added `{}` with {}. Their sign-in link works once, for {} hours:",
                user.name,
                describe(&user.permissions),
                super::access::SIGN_IN_LINK_HOURS
            );
            println!("{base}{path}");
            Ok(())
        }
        UserCommand::List { database } => {
            let access = open(&database.database_url).await?;
            let people = access
                .list_people()
                .await
                .map_err(|e| format!("cannot list people: {e}"))?;
            if people.is_empty() {
                println!("No people yet.");
            }
            for p in people {
                let state = match p.disabled_at_ms {
                    Some(at) => format!("disabled {}", time(at)),
                    None => "enabled".to_string(),
                };
                println!(
                    "{}  {}  {}  {}  {} session{}",
                    p.user.name,
                    p.user.id,
                    describe(&p.user.permissions),
                    state,
                    p.sessions,
                    if p.sessions == 1 { "" } else { "s" }
                );
            }
            Ok(())
        }
        UserCommand::Disable { user, database } => {
            let access = open(&database.database_url).await?;
            let row = found(&user, access.disable_user(&user).await)?;
            println!("Disabled `{}`; their sessions have ended.", row.name);
            Ok(())
        }
        UserCommand::Enable { user, database } => {
            let access = open(&database.database_url).await?;
            let row = found(&user, access.enable_user(&user).await)?;
            println!(
                "Enabled `{}`; `kandev-recovery user link {}` prints a sign-in link.",
                row.name, row.name
            );
            Ok(())
        }
        UserCommand::Remove { user, database } => {
            let access = open(&database.database_url).await?;
            let row = found(&user, access.remove_user(&user).await)?;
            println!("Removed `{}`; their sessions have ended.", row.name);
            Ok(())
        }
        UserCommand::Grant {
            user,
            permissions,
            database,
        } => {
            let access = open(&database.database_url).await?;
            let row = found(
                &user,
                access
                    .change_permissions(&user, |now| now.with(permissions))
                    .await,
            )?;
            println!("`{}` now has {}.", row.name, describe(&row.permissions));
            Ok(())
        }
        UserCommand::Revoke {
            user,
            permissions,
            database,
        } => {
            let access = open(&database.database_url).await?;
            let row = found(
                &user,
                access
                    .change_permissions(&user, |now| now.without(permissions))
                    .await,
            )?;
            println!("`{}` now has {}.", row.name, describe(&row.permissions));
            Ok(())
        }
        UserCommand::Link {
            user,
            url,
            database,
        } => {
            let base = url.trim_end_matches('/');
            if !(base.starts_with("http://") || base.starts_with("https://")) {
                return Err(format!(
                    "--url must be an http:// or https:// address, not `{url}`"
                ));
            }
            let access = open(&database.database_url).await?;
            let people = access
                .list_people()
                .await
                .map_err(|e| format!("cannot read people: {e}"))?;
            let Some(person) = people
                .into_iter()
                .find(|p| p.user.id == user || p.user.name == user)
            else {
                return Err(no_such_person(&user));
            };
            if person.disabled_at_ms.is_some() {
                return Err(format!(
                    "`{}` is disabled; `kandev-recovery user enable {}` first",
                    person.user.name, person.user.name
                ));
            }
            let path = access
                .sign_in_path(&person.user)
                .await
                .map_err(|e| format!("cannot make the sign-in link: {e}"))?;
            println!(
                "A sign-in link for `{}`; it works once, for {} hours:",
                person.user.name,
                super::access::SIGN_IN_LINK_HOURS
            );
            println!("{base}{path}");
            Ok(())
        }
    }
}

fn no_such_person(user: &str) -> String {
    format!("nobody has the name or id `{user}`; `kandev-recovery user list` shows them")
}

/// The person a command changed, or why there is none.
fn found(
    user: &str,
    changed: Result<Option<crate::store::UserRow>, StoreError>,
) -> Result<crate::store::UserRow, String> {
    match changed {
        Ok(Some(row)) => Ok(row),
        Ok(None) => Err(no_such_person(user)),
        Err(e) => Err(format!("cannot change `{user}`: {e}")),
    }
}

fn describe(stored: &str) -> String {
    let list = Permissions::from_stored(stored).list();
    let names: Vec<&str> = list.iter().map(|p| p.as_str()).collect();
    format!(
        "permission{} {}",
        if names.len() == 1 { "" } else { "s" },
        names.join(", ")
    )
}

fn time(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S").to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::checked_name;

    #[test]
    fn names_are_trimmed_bounded_and_visible() {
        assert_eq!(checked_name("--name", "  ci runner "), Ok("ci runner"));
        assert!(checked_name("--name", " ").is_err());
        assert!(checked_name("--name", &"é".repeat(101)).is_err());
        for hidden in [
            "ci\u{202E}nur",
            "ci\u{200B}runner",
            "ci\nrunner",
            "a\u{1B}[2Jb",
        ] {
            let e = checked_name("--name", hidden).unwrap_err();
            assert!(e.starts_with("--name must not contain"), "{e}");
        }
    }
}
