//! `devlens project …`: named specs and the active project.

use devlens_core::{Config, ProjectRegistry};

use crate::cli::ProjectCommand;

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
