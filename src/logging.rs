//! The operator's log format: JSON lines where a machine reads the logs (stdout is not a
//! terminal, as in a container), coloured text where a person does.

use std::io::IsTerminal;

/// How log lines are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// JSON when stdout is not a terminal, coloured text when it is.
    #[default]
    Auto,
    /// One JSON object per line.
    Json,
    /// Human-readable text (coloured only on a terminal).
    Text,
}

/// Whether to write JSON. Pure: the caller says whether stdout is a terminal.
pub fn writes_json(format: LogFormat, stdout_is_terminal: bool) -> bool {
    match format {
        LogFormat::Auto => !stdout_is_terminal,
        LogFormat::Json => true,
        LogFormat::Text => false,
    }
}

/// Installs the global subscriber: `RUST_LOG` filters (default `info`), `format` chooses JSON
/// or text. Colours only on a terminal, so files and log collectors get no escape codes.
pub fn init(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let terminal = std::io::stdout().is_terminal();
    let fmt = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(terminal);
    if writes_json(format, terminal) {
        fmt.json().init();
    } else {
        fmt.init();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_writes_json_unless_stdout_is_a_terminal() {
        assert!(writes_json(LogFormat::Auto, false));
        assert!(!writes_json(LogFormat::Auto, true));
    }

    #[test]
    fn an_explicit_format_wins_over_the_terminal_check() {
        assert!(writes_json(LogFormat::Json, true));
        assert!(!writes_json(LogFormat::Text, false));
    }
}
