//! The component graph of one environment (config.md §6.4, execution.md §12.2): ids unique, every
//! dependency a component of the same environment and never the component itself, and no cycle.
//!
//! Owns only these static checks over the manifest's declarations; loading modules in dependency order
//! at run time is `sandbox`'s concern.

use std::collections::BTreeMap;

use crate::apps::error::{fail, AppError, AppErrorKind};
use crate::config::manifest::Component;

/// Checks one environment's components (config.md §6.4) → `template_invalid`.
pub fn check(components: &[Component]) -> Result<(), AppError> {
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, c) in components.iter().enumerate() {
        if index.insert(c.id.as_str(), i).is_some() {
            return fail(AppErrorKind::ComponentIdDuplicate);
        }
    }
    // Edges point from a component to each of its dependencies.
    let mut edges: Vec<Vec<usize>> = Vec::with_capacity(components.len());
    for c in components {
        let mut out = Vec::with_capacity(c.dependencies.len());
        for dep in &c.dependencies {
            if *dep == c.id {
                return fail(AppErrorKind::DependencySelf);
            }
            match index.get(dep.as_str()) {
                Some(&j) => out.push(j),
                None => return fail(AppErrorKind::DependencyUnknown),
            }
        }
        edges.push(out);
    }
    if acyclic(&edges) {
        Ok(())
    } else {
        fail(AppErrorKind::DependencyCycle)
    }
}

/// Kahn's algorithm: the graph is acyclic iff every node can be removed once nothing depends on it.
fn acyclic(edges: &[Vec<usize>]) -> bool {
    let mut indegree = vec![0usize; edges.len()];
    for targets in edges {
        for &t in targets {
            if let Some(d) = indegree.get_mut(t) {
                *d += 1;
            }
        }
    }
    let mut ready: Vec<usize> = (0..edges.len()).filter(|&i| indegree.get(i) == Some(&0)).collect();
    let mut removed = 0;
    while let Some(node) = ready.pop() {
        removed += 1;
        for &t in edges.get(node).map(Vec::as_slice).unwrap_or(&[]) {
            if let Some(d) = indegree.get_mut(t) {
                *d -= 1;
                if *d == 0 {
                    ready.push(t);
                }
            }
        }
    }
    removed == edges.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(id: &str, deps: &[&str]) -> Component {
        Component {
            id: id.into(),
            path: format!("{id}.luau"),
            dependencies: deps.iter().map(|d| d.to_string()).collect(),
        }
    }

    #[test]
    fn graph_vectors() {
        let ok = || Ok(());
        let table: Vec<(Vec<Component>, Result<(), AppError>)> = vec![
            (vec![c("app", &[])], ok()),
            (vec![c("app", &["util"]), c("util", &[])], ok()),
            (vec![c("a", &["b", "c"]), c("b", &["c"]), c("c", &[])], ok()),
            (vec![c("app", &[]), c("app", &[])], fail(AppErrorKind::ComponentIdDuplicate)),
            (vec![c("app", &["app"])], fail(AppErrorKind::DependencySelf)),
            (vec![c("app", &["nope"])], fail(AppErrorKind::DependencyUnknown)),
            (vec![c("a", &["b"]), c("b", &["a"])], fail(AppErrorKind::DependencyCycle)),
            (
                vec![c("a", &["b"]), c("b", &["c"]), c("c", &["a"]), c("d", &[])],
                fail(AppErrorKind::DependencyCycle),
            ),
        ];
        for (components, want) in table {
            let ids: Vec<&str> = components.iter().map(|c| c.id.as_str()).collect();
            assert_eq!(check(&components), want, "{ids:?}");
        }
    }
}
