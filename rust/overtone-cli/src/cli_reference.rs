//! `docs/reference/cli.md`: the command-line reference written from the clap definition, so
//! that every command, flag, default and accepted value in the manual is the binary's own.
//!
//! The page is checked by the test below; `OVERTONE_UPDATE_DOCS=1 cargo test --release -p
//! overtone-cli cli_reference` rewrites it after a change to a command.

use clap::{Arg, ArgAction, Command};

/// The Markdown page for `cli` (the `overtone` command): a section per subcommand with its
/// description, its usage line and a table of its arguments (name, value, default, accepted
/// values, meaning).
pub(crate) fn markdown(cli: &Command) -> String {
    let mut o = String::new();
    o += "<!-- @generated from the clap definition in rust/overtone-cli/src/main.rs by\n";
    o += "     rust/overtone-cli/src/cli_reference.rs: do not edit; after changing a command run\n";
    o += "     OVERTONE_UPDATE_DOCS=1 cargo test --release -p overtone-cli cli_reference -->\n";
    o += "# Command-line reference\n\n";
    o += &format!(
        "`{}`: {} Run it as `target/release/{}` after a build, or as `cargo run --release -p \
         overtone-cli -- COMMAND ...`. Options that apply to every command:\n\n",
        cli.get_name(),
        text(cli.get_about()),
        cli.get_name()
    );
    arg_table(
        &mut o,
        cli.get_arguments().filter(|a| a.is_global_set() && !a.is_hide_set()),
    );
    let settings = "Flags shared by `run` and `bake` that set the motion (damping, frequency, \
                    strength, ...) are listed with their units and ranges in the \
                    [settings reference](settings.md) as well.\n\n";
    o += settings;
    for sub in cli
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
    {
        o += &format!("## `{} {}`\n\n", cli.get_name(), sub.get_name());
        o += &format!("{}\n\n", text(sub.get_long_about().or(sub.get_about())));
        let mut usage = sub.clone().bin_name(format!("{} {}", cli.get_name(), sub.get_name()));
        o += &format!(
            "```\n{}\n```\n\n",
            usage.render_usage().to_string().trim_start_matches("Usage: ")
        );
        arg_table(
            &mut o,
            sub.get_arguments()
                .filter(|a| !a.is_global_set() && !a.is_hide_set() && a.get_id() != "help"),
        );
    }
    o
}

/// One table row per argument.
fn arg_table<'a>(o: &mut String, args: impl Iterator<Item = &'a Arg>) {
    let rows: Vec<String> = args.map(row).collect();
    if rows.is_empty() {
        *o += "No options.\n\n";
        return;
    }
    *o += "| argument | value | default | meaning |\n|---|---|---|---|\n";
    for r in rows {
        *o += &r;
    }
    *o += "\n";
}

fn row(a: &Arg) -> String {
    let takes_value = !matches!(
        a.get_action(),
        ArgAction::SetTrue | ArgAction::SetFalse | ArgAction::Count | ArgAction::Help | ArgAction::Version
    );
    let name = match a.get_long() {
        Some(l) => format!("`--{l}`"),
        None => format!(
            "`{}`",
            a.get_value_names()
                .and_then(|v| v.first())
                .map_or(a.get_id().to_string(), |v| v.to_string())
        ),
    };
    let value = if !takes_value {
        "-".to_string()
    } else {
        let possible: Vec<String> = a
            .get_possible_values()
            .iter()
            .filter(|p| !p.is_hide_set())
            .map(|p| format!("`{}`", p.get_name()))
            .collect();
        if !possible.is_empty() {
            possible.join(", ")
        } else {
            a.get_value_names()
                .map(|v| v.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(" "))
                .unwrap_or_else(|| a.get_id().to_string().to_uppercase())
        }
    };
    let default: Vec<String> = a
        .get_default_values()
        .iter()
        .map(|v| format!("`{}`", v.to_string_lossy()))
        .collect();
    let repeat = matches!(a.get_action(), ArgAction::Append) && a.get_long().is_some();
    let mut meaning = text(a.get_long_help().or(a.get_help()));
    // The accepted values' own descriptions (a value enum's variant docs).
    for p in a.get_possible_values().iter().filter(|p| !p.is_hide_set()) {
        if let Some(h) = p.get_help() {
            meaning += &format!(
                "{}`{}`: {}",
                if meaning.is_empty() { "" } else { " " },
                p.get_name(),
                text(Some(h))
            );
        }
    }
    if repeat {
        meaning += if meaning.is_empty() {
            "May be repeated."
        } else {
            " May be repeated."
        };
    }
    if a.is_required_set() || a.get_long().is_none() {
        meaning = format!("(required) {meaning}");
    }
    format!(
        "| {name} | {value} | {} | {} |\n",
        if default.is_empty() {
            "-".to_string()
        } else {
            default.join(", ")
        },
        meaning.replace('|', "\\|")
    )
}

/// A help text on one line (clap keeps the doc comment's line breaks in long help).
fn text(s: Option<&clap::builder::StyledStr>) -> String {
    let raw = s.map(|s| s.to_string()).unwrap_or_default();
    let mut out = String::new();
    for para in raw.split("\n\n") {
        if !out.is_empty() {
            out += " ";
        }
        out += &para.split_whitespace().collect::<Vec<_>>().join(" ");
    }
    out.trim_end_matches('.').to_string() + if raw.trim().is_empty() { "" } else { "." }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// The page in `docs/` is the one the binary's definition writes (a flag added, renamed or
    /// removed, or a default changed, without the page following, fails here).
    #[test]
    fn cli_reference_is_current() {
        let page = super::markdown(&crate::Cli::command());
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/reference/cli.md");
        if std::env::var_os("OVERTONE_UPDATE_DOCS").is_some() {
            std::fs::write(&path, &page).expect("write docs/reference/cli.md");
        }
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == page,
            "docs/reference/cli.md is stale: run OVERTONE_UPDATE_DOCS=1 cargo test --release -p overtone-cli cli_reference"
        );
        for flag in [
            "--solver",
            "--out",
            "--sidecar",
            "--frames",
            "--damping",
            "--frequency",
            "--force",
        ] {
            assert!(page.contains(&format!("`{flag}`")), "{flag} missing from the page");
        }
    }
}
