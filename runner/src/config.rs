//! The runner's configuration file: how to launch the agent behind each
//! candidate. A dynamic profile names candidates by an opaque `profile_ref`;
//! this file says, per `profile_ref`, which command runs it and how its
//! output reads. Everything is checked before any agent runs: a malformed
//! file, an unknown key or format, or a candidate with no entry is an error
//! that names the key.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The default file name, looked up in the working directory.
pub const DEFAULT_FILE: &str = "kandev-runner.toml";

/// The placeholder in `command` that becomes the prompt.
pub const PROMPT_PLACEHOLDER: &str = "{prompt}";

/// How an agent's output is read. One reader per format (`super::format`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, strum::IntoStaticStr, strum::VariantArray,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum Format {
    /// Plain text: stdout is the answer, stderr and the exit code the evidence.
    Plain,
    /// `claude -p … --output-format stream-json --verbose`.
    ClaudeStreamJson,
    /// `codex exec --json …`.
    CodexJson,
    /// `gemini -p … --output-format stream-json`.
    GeminiStreamJson,
    /// An Agent Client Protocol agent over stdio (JSON-RPC).
    Acp,
    /// `codex app-server`: Codex's own JSON-RPC protocol over stdio.
    CodexAppServer,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The agent family and provider a format's CLI speaks for, named in
    /// a concrete session's evidence when its table does not say (`plain`
    /// and `acp` may be anything).
    pub fn implied_agent(self) -> Option<(&'static str, &'static str)> {
        match self {
            Format::ClaudeStreamJson => Some(("claude-code", "anthropic")),
            Format::CodexJson | Format::CodexAppServer => Some(("codex", "openai")),
            Format::GeminiStreamJson => Some(("gemini-cli", "google")),
            Format::Plain | Format::Acp => None,
        }
    }

    /// The prompt goes over the protocol, not on the command line, and the
    /// agent's permission requests are answered from the configuration.
    pub fn speaks_protocol(self) -> bool {
        matches!(self, Format::Acp | Format::CodexAppServer)
    }

    /// Every format's name, for messages: `plain, claude-stream-json, …`.
    pub fn names() -> String {
        let names: Vec<&str> = <Format as strum::VariantArray>::VARIANTS
            .iter()
            .map(|f| f.as_str())
            .collect();
        names.join(", ")
    }
}

/// What the runner answers when an ACP agent asks permission for a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Permissions {
    /// Refuse every request (the default: the runner has no person to ask).
    #[default]
    Deny,
    /// Allow the tool kinds listed in `allow_tools`, refuse the rest.
    AllowListed,
    /// Allow every request.
    AllowAll,
}

/// One `[agents.<profile_ref>]` table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// The argv; `{prompt}` in any element becomes the prompt. Without a
    /// `{prompt}` (and for `acp` and `codex-app-server`, which send it over the
    /// protocol) the prompt is not on the command line.
    pub command: Vec<String>,
    pub format: Format,
    /// Extra environment for the agent (added to the runner's own).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Working directory, relative to the configuration file's folder.
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// ACP and `codex-app-server` only: how tool permission (approval)
    /// requests are answered.
    #[serde(default)]
    pub permissions: Permissions,
    /// ACP and `codex-app-server` only, with `permissions =
    /// "allow_listed"`: ACP tool kinds (`read`, `edit`, `search`,
    /// `execute`, `fetch`, …) to allow; a Codex command approval is
    /// `execute`, a file change `edit`, a sandbox permission `other`.
    #[serde(default)]
    pub allow_tools: Vec<String>,
    /// Stop an attempt that runs longer than this (seconds). Off by
    /// default: a slow agent is not a failed one, but some CLIs wait
    /// forever for a provider that never answers.
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
    /// `run --agent` only (a profile's candidate names its own): the agent
    /// family its evidence names (`claude-code`, `codex`, `gemini-cli`, …)
    /// and the provider and model it uses, for the classifier's provider
    /// rules. Default: what the `format` implies, if anything.
    #[serde(default)]
    pub agent: Option<String>,
    #[serde(default)]
    pub provider_id: Option<String>,
    #[serde(default)]
    pub model_id: Option<String>,
}

impl AgentConfig {
    /// The agent family and provider a concrete session's evidence names:
    /// the table's own, else what its format implies, else none.
    pub fn identity(&self) -> (String, String) {
        let implied = self.format.implied_agent();
        let agent = self
            .agent
            .clone()
            .or_else(|| implied.map(|(a, _)| a.to_string()))
            .unwrap_or_default();
        let provider = self
            .provider_id
            .clone()
            .or_else(|| implied.map(|(_, p)| p.to_string()))
            .unwrap_or_default();
        (agent, provider)
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    agents: BTreeMap<String, AgentConfig>,
}

/// The whole runner configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct RunnerConfig {
    pub path: PathBuf,
    pub agents: BTreeMap<String, AgentConfig>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read the runner configuration {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
    #[error("{path}: {message}")]
    Missing { path: String, message: String },
}

pub type Result<T, E = ConfigError> = std::result::Result<T, E>;

impl RunnerConfig {
    /// Reads and checks the file.
    pub fn load(path: &Path) -> Result<RunnerConfig> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.display().to_string(),
            source,
        })?;
        RunnerConfig::parse(path, &text)
    }

    pub fn parse(path: &Path, text: &str) -> Result<RunnerConfig> {
        let shown = path.display().to_string();
        let invalid = |message: String| ConfigError::Invalid {
            path: shown.clone(),
            message,
        };
        let file: File =
            toml::from_str(text).map_err(|e| invalid(describe_toml_error(&e, text)))?;
        for (name, agent) in &file.agents {
            let key = format!("agents.{name}");
            if agent.command.is_empty() || agent.command[0].trim().is_empty() {
                return Err(invalid(format!(
                    "`{key}.command` must name a program, e.g. [\"claude\", \"-p\", \"{PROMPT_PLACEHOLDER}\"]"
                )));
            }
            if !agent.format.speaks_protocol()
                && !agent.command.iter().any(|a| a.contains(PROMPT_PLACEHOLDER))
            {
                return Err(invalid(format!(
                    "`{key}.command` has no `{PROMPT_PLACEHOLDER}`: the prompt must go somewhere \
                     (only `format = \"acp\"` and `format = \"codex-app-server\"` send it over \
                     the protocol)"
                )));
            }
            if !agent.format.speaks_protocol()
                && (agent.permissions != Permissions::Deny || !agent.allow_tools.is_empty())
            {
                return Err(invalid(format!(
                    "`{key}.permissions` and `{key}.allow_tools` apply to `format = \"acp\"` and \
                     `format = \"codex-app-server\"` only"
                )));
            }
            if agent.timeout_seconds == Some(0) {
                return Err(invalid(format!(
                    "`{key}.timeout_seconds` must be at least 1 (leave it out for no limit)"
                )));
            }
            if agent.permissions != Permissions::AllowListed && !agent.allow_tools.is_empty() {
                return Err(invalid(format!(
                    "`{key}.allow_tools` needs `permissions = \"allow_listed\"`"
                )));
            }
        }
        Ok(RunnerConfig {
            path: path.to_path_buf(),
            agents: file.agents,
        })
    }

    /// The agent for a candidate's `profile_ref`, or an error naming the key
    /// that is missing.
    pub fn agent(&self, profile_ref: &str, candidate_label: &str) -> Result<&AgentConfig> {
        let path = self.path.display().to_string();
        if profile_ref.trim().is_empty() {
            return Err(ConfigError::Missing {
                path,
                message: format!(
                    "candidate \"{candidate_label}\" has no profile_ref; give it one in the \
                     profile, and an [agents.<profile_ref>] table here"
                ),
            });
        }
        self.agents
            .get(profile_ref)
            .ok_or_else(|| ConfigError::Missing {
                path,
                message: format!(
                    "no [agents.{profile_ref}] table for candidate \"{candidate_label}\" \
                     (profile_ref `{profile_ref}`); configured: {}",
                    if self.agents.is_empty() {
                        "none".to_string()
                    } else {
                        self.agents.keys().cloned().collect::<Vec<_>>().join(", ")
                    }
                ),
            })
    }

    /// The agent for a candidate, checked as far as it can be before it
    /// runs: its table exists and its working directory is a directory.
    pub fn runnable(&self, profile_ref: &str, candidate_label: &str) -> Result<&AgentConfig> {
        let agent = self.agent(profile_ref, candidate_label)?;
        if let Some(dir) = self.working_dir(agent) {
            if !dir.is_dir() {
                return Err(ConfigError::Invalid {
                    path: self.path.display().to_string(),
                    message: format!(
                        "`agents.{profile_ref}.cwd` is not a directory: {}",
                        dir.display()
                    ),
                });
            }
        }
        Ok(agent)
    }

    /// The agent's working directory: `cwd` relative to this file's folder.
    pub fn working_dir(&self, agent: &AgentConfig) -> Option<PathBuf> {
        let cwd = agent.cwd.as_ref()?;
        if cwd.is_absolute() {
            return Some(cwd.clone());
        }
        let base = self.path.parent().filter(|p| !p.as_os_str().is_empty());
        Some(base.map(|b| b.join(cwd)).unwrap_or_else(|| cwd.clone()))
    }
}

/// toml's messages already name the line and the key; an unknown `format`
/// also lists the ones there are.
fn describe_toml_error(e: &toml::de::Error, text: &str) -> String {
    let message = e.message();
    let location = e
        .span()
        .map(|s| {
            let before = &text[..s.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
            format!(" (line {line}, column {column})")
        })
        .unwrap_or_default();
    if message.contains("unknown variant") && message.contains("plain") {
        return format!(
            "unknown `format`: {}{location}; formats are {}",
            message.lines().next().unwrap_or(message),
            Format::names()
        );
    }
    format!("{}{location}", message.trim_end())
}

/// The argv with `{prompt}` replaced.
pub fn argv(agent: &AgentConfig, prompt: &str) -> Vec<String> {
    agent
        .command
        .iter()
        .map(|a| a.replace(PROMPT_PLACEHOLDER, prompt))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<RunnerConfig> {
        RunnerConfig::parse(Path::new("kandev-runner.toml"), text)
    }

    #[test]
    fn reads_a_complete_file() {
        let c = parse(
            r#"
            [agents.claude-sonnet]
            command = ["claude", "-p", "{prompt}", "--output-format", "stream-json", "--verbose"]
            format = "claude-stream-json"
            env = { ANTHROPIC_BASE_URL = "http://127.0.0.1:9" }
            cwd = "work"

            [agents.gemini-acp]
            command = ["gemini", "--experimental-acp"]
            format = "acp"
            permissions = "allow_listed"
            allow_tools = ["read"]
            "#,
        )
        .expect("valid");
        let a = c.agent("claude-sonnet", "Claude").expect("present");
        assert_eq!(a.format, Format::ClaudeStreamJson);
        assert_eq!(a.env["ANTHROPIC_BASE_URL"], "http://127.0.0.1:9");
        assert_eq!(c.working_dir(a), Some(PathBuf::from("work")));
        assert_eq!(argv(a, "hi there")[2], "hi there");
        assert_eq!(
            c.agent("gemini-acp", "G").expect("present").permissions,
            Permissions::AllowListed
        );
    }

    #[test]
    fn errors_name_the_key() {
        let cases = [
            (
                "[agents.a]\ncommand = [\"x\", \"{prompt}\"]\nformat = \"jsonl\"\n",
                "format",
            ),
            (
                "[agents.a]\ncommand = [\"x\", \"{prompt}\"]\nformat = \"plain\"\ncolour = 1\n",
                "colour",
            ),
            ("[agents.a]\ncommand = []\nformat = \"plain\"\n", "agents.a.command"),
            ("[agents.a]\ncommand = [\"x\"]\nformat = \"plain\"\n", "{prompt}"),
            ("[agents.a]\nformat = \"plain\"\n", "command"),
            ("[agents.a\n", "line 1"),
            (
                "[agents.a]\ncommand = [\"x\", \"{prompt}\"]\nformat = \"plain\"\npermissions = \"allow_all\"\n",
                "agents.a.permissions",
            ),
        ];
        for (text, key) in cases {
            let e = parse(text).expect_err(text).to_string();
            assert!(e.contains(key), "{text:?}: {e}");
            assert!(e.starts_with("kandev-runner.toml"), "{e}");
        }
        let e = parse("[agents.a]\ncommand = [\"x\", \"{prompt}\"]\nformat = \"jsonl\"\n")
            .expect_err("unknown format")
            .to_string();
        assert!(e.contains("claude-stream-json"), "lists the formats: {e}");
    }

    #[test]
    fn a_missing_candidate_names_its_table() {
        let c = parse("[agents.a]\ncommand = [\"x\", \"{prompt}\"]\nformat = \"plain\"\n")
            .expect("valid");
        let e = c.agent("codex", "Codex (GPT-5)").expect_err("missing");
        assert!(e.to_string().contains("[agents.codex]"), "{e}");
        assert!(e.to_string().contains("configured: a"), "{e}");
        let e = c.agent("", "Codex").expect_err("no ref");
        assert!(e.to_string().contains("no profile_ref"), "{e}");
        let c = parse("[agents.a]\ncommand = [\"x\", \"{prompt}\"]\nformat = \"plain\"\ncwd = \"/nonexistent/dir\"\n")
            .expect("valid");
        let e = c.runnable("a", "A").expect_err("no such directory");
        assert!(e.to_string().contains("agents.a.cwd"), "{e}");
        assert!(parse("[agents.a]\ncommand = [\"x\", \"{prompt}\"]\nformat = \"plain\"\ntimeout_seconds = 0\n").is_err());
    }

    #[test]
    fn codex_app_server_speaks_its_protocol() {
        // No `{prompt}` (it goes in `turn/start`), approvals configured as
        // ACP's permissions are, and Codex implied.
        let c = parse(
            "[agents.c]\ncommand = [\"codex\", \"app-server\"]\nformat = \"codex-app-server\"\n\
             permissions = \"allow_listed\"\nallow_tools = [\"edit\"]\n",
        )
        .expect("valid");
        let a = c.agent("c", "C").expect("present");
        assert_eq!(a.format, Format::CodexAppServer);
        assert_eq!(a.allow_tools, vec!["edit".to_string()]);
        assert_eq!(a.identity(), ("codex".into(), "openai".into()));
        let e = parse("[agents.a]\ncommand = [\"x\"]\nformat = \"codex-json\"\n")
            .expect_err("codex exec needs the prompt")
            .to_string();
        assert!(e.contains("codex-app-server"), "{e}");
    }

    #[test]
    fn a_concrete_agent_names_itself_or_its_format_does() {
        let c = parse(
            "[agents.c]\ncommand = [\"claude\", \"-p\", \"{prompt}\"]\nformat = \"claude-stream-json\"\n\
             [agents.p]\ncommand = [\"x\", \"{prompt}\"]\nformat = \"plain\"\n\
             [agents.q]\ncommand = [\"x\", \"{prompt}\"]\nformat = \"plain\"\nagent = \"aider\"\nprovider_id = \"openrouter\"\n",
        )
        .expect("valid");
        let id = |name: &str| c.agent(name, name).expect("present").identity();
        assert_eq!(id("c"), ("claude-code".into(), "anthropic".into()));
        assert_eq!(id("p"), (String::new(), String::new()));
        assert_eq!(id("q"), ("aider".into(), "openrouter".into()));
    }
}
