//! The tree the docs draw is the tree the running system reports (issue 13): a gateway with two tools,
//! `mission` (a write tool, so the gateway has a private audit) over a stdio upstream (the fault fixture)
//! with a workflow model `llm` (models.md §3.3), and `fwd` over a Streamable HTTP upstream (the HTTP
//! fixture), is started through the library; its
//! supervision tree, rendered by `TreeNode::render`, equals the block under "The tree of a running
//! gateway" in `docs/architecture.md`, line for line.

use crate::support;

use serde_json::json;
use support::http_fixture::HttpFixture;
use support::providers::Fx;

/// The fenced block of `docs/architecture.md` that follows the marker line.
fn drawn_tree() -> String {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/architecture.md"))
        .expect("docs/architecture.md");
    let marker = "<!-- the tree of tests/inproc/supervision_tree.rs -->";
    let after = &doc[doc.find(marker).expect("the marker line") + marker.len()..];
    let body = after.split_once("```text\n").expect("an opening fence").1;
    body.split_once("```").expect("a closing fence").0.to_owned()
}

/// `fwd` moved onto installation `web`, the HTTP fixture; every credential bound to a file, so the test
/// never touches its own environment.
fn deployment(up: &HttpFixture) -> Fx {
    let mut fx = Fx::new("modern");
    fx.d.host["install"]["web"] = json!({
        "source": "mcp", "installation_revision": "http-fixture-1",
        "transport": {"type": "streamable_http", "endpoint": up.endpoint(""),
                      "allow_insecure_loopback": true,
                      "headers": [{"name": "Authorization", "binding": "upstream", "scheme": "bearer"}]},
        "tools": {"echo": {"as": "web.echo", "effect": "read"}}
    });
    fx.d.host["credentials"]["upstream"] = json!({"file": "upstream_token"});
    fx.d.host["credentials"]["flags"] = json!({"file": "flags"});
    fx.d.host["credentials"]["gateway"] = json!({"file": "token"});
    fx.d.write_file("upstream_token", support::providers::HTTP_TOKEN);
    fx.d.write_file("flags", "none");
    fx.d.write_file("token", support::TOKEN);
    // `mission` writes, so the gateway has a private audit and its committer's owner.
    fx.make_mission_write();
    // ... and the metrics file, whose writer has its owner (audit-events.md §3.12).
    fx.d.gateway["artifacts"]["metrics"] = json!({});
    // ... and declares the model `llm`, whose site has its owner (startup sends it nothing, models.md §3.1,
    // so its endpoint need not listen).
    fx.d.host["credentials"]["model_key"] = json!({"file": "model_key"});
    fx.d.write_file("model_key", "sk-tree-test");
    let unused = support::free_port("127.0.0.1");
    fx.d.host["install"]["llm"] = json!({
        "source": "llm", "installation_revision": "m-1", "endpoint": format!("http://127.0.0.1:{unused}/v1"),
        "allow_insecure_loopback": true, "model": "m", "credential": "model_key"
    });
    let path = fx.d.path("mission/ptc.json");
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).expect("manifest")).expect("json");
    manifest["providers"]["workflow"] = json!([{"name": "llm"}]);
    fx.d.write_file("mission/ptc.json", &serde_json::to_string_pretty(&manifest).expect("json"));
    fx.d.gateway["tools"][1]["expected_application_content_digest"] =
        json!(support::content_pin::of(&fx.d.path("mission/ptc.json")));
    let path = fx.d.path("fwd/ptc.json");
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).expect("manifest")).expect("json");
    manifest["workflow"]["forward"]["tool"] = json!("web.echo");
    manifest["providers"]["mission"] = json!([{"name": "web"}]);
    manifest["missions"]["default"]["providers"] = json!(["web"]);
    fx.d.write_file("fwd/ptc.json", &serde_json::to_string_pretty(&manifest).expect("json"));
    let digest = support::content_pin::of(&fx.d.path("fwd/ptc.json"));
    fx.d.gateway["tools"][0]["expected_application_content_digest"] = json!(digest);
    fx.pin();
    fx
}

#[tokio::test(flavor = "multi_thread")]
async fn the_running_tree_is_the_tree_drawn_in_the_architecture_doc() {
    let up = HttpFixture::start("auth");
    let fx = deployment(&up);
    let _audit_hooks = support::process_state_shared().await;
    let gateway = support::start_inproc(&fx.d).await;
    let tree = gateway.domain().tree().await.expect("the tree");
    let rendered = ptc_actors::TreeNode::render(&tree, "domain");
    assert_eq!(rendered, drawn_tree(), "the running tree:\n{rendered}");
    gateway.context().trigger().signal();
    assert_eq!(gateway.serve_until_stopped().await, 0);
    fx.assert_all_gone();
}

/// lifecycle.md §6.3, audit-events.md §3.7: the loss of the event log's owner is tolerated: the tree shows
/// it lost, readiness stays true, calls are served, and the shutdown is clean.
#[tokio::test(flavor = "multi_thread")]
async fn losing_the_event_logger_changes_nothing() {
    let up = HttpFixture::start("auth");
    let fx = deployment(&up);
    let _audit_hooks = support::process_state_shared().await;
    let gateway = support::start_inproc(&fx.d).await;
    gateway.domain().inject_panic("event_logger").await.expect("the event_logger node");
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let tree = gateway.domain().tree().await.expect("the tree");
        let logger = tree.iter().find(|n| n.name == "event_logger").expect("event_logger");
        if logger.status == ptc_actors::ChildStatus::Lost(ptc_actors::LossKind::Failed) {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the loss never reached the supervisor");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(gateway.readiness().is_ready(), "logging never changes readiness");
    let addr = gateway.http_addr();
    let ready = tokio::task::spawn_blocking(move || support::http_get(addr, "/health/ready").expect("ready"));
    assert_eq!(ready.await.expect("join").status, 200);
    gateway.context().trigger().signal();
    assert_eq!(gateway.serve_until_stopped().await, 0);
    fx.assert_all_gone();
}

/// models.md §3.3: the loss of a model site's owner fences readiness with `provider_runtime_lost`, and the
/// event log's `readiness` record names the pair (`mission`, `llm`).
#[tokio::test(flavor = "multi_thread")]
async fn losing_a_model_site_owner_fences_with_the_pair() {
    let up = HttpFixture::start("auth");
    let fx = deployment(&up);
    let _audit_hooks = support::process_state_shared().await;
    let gateway = support::start_inproc(&fx.d).await;
    assert!(gateway.readiness().is_ready());
    gateway.domain().inject_panic("providers/tool:mission/model:llm").await.expect("the model:llm node");
    let record = fx.wait_event("the fence", |e| e["kind"] == "readiness" && e["transition"] == "not_ready");
    assert_eq!(
        (&record["cause"], &record["tool"], &record["provider"]),
        (&json!("provider_runtime_lost"), &json!("mission"), &json!("llm"))
    );
    assert!(!gateway.readiness().is_ready());
    gateway.context().trigger().signal();
    gateway.serve_until_stopped().await;
    fx.assert_all_gone();
}
