//! `devlens project …`: named specs and the active project.

use clap::Subcommand;

use devlens_core::{Config, ProjectRegistry};

#[derive(Debug, Subcommand)]
pub(crate) enum ProjectCommand {
    /// List projects and which one is active
    List {
        #[arg(long)]
        json: bool,
    },
    /// Add (or update) a project in the data directory's projects.json
    Add {
        name: String,
        /// The project's spec: a file path or an http(s) URL
        spec: String,
    },
    /// Make a project the active one
    Use { name: String },
    /// Remove a project from the data directory's projects.json
    Remove { name: String },
}

pub(crate) fn run(config: Config, command: ProjectCommand) -> anyhow::Result<()> {
    let mut registry = ProjectRegistry::load(&config)?;
    match command {
        ProjectCommand::List { json } => {
            let list = devlens_app::projects::ProjectList {
                projects: registry.projects().to_vec(),
                active: registry.active_name(),
            };
            crate::output::report(json, &list)?;
        }
        ProjectCommand::Add { name, spec } => {
            let project = registry.add(&name, &spec)?;
            eprintln!(
                "added project '{}' ({})",
                project.name,
                project.spec.as_deref().unwrap_or_default()
            );
        }
        ProjectCommand::Use { name } => {
            registry.set_active(&name)?;
            eprintln!("active project: {name}");
        }
        ProjectCommand::Remove { name } => {
            registry.remove(&name)?;
            eprintln!("removed project '{name}'");
        }
    }
    Ok(())
}
