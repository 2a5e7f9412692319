//! The tree the docs draw is the tree the running system reports (issue 13): a gateway with two tools,
//! `mission` over a stdio upstream (the fault fixture) and `fwd` over a Streamable HTTP upstream (the HTTP
//! fixture), is started through the library; its supervision tree, rendered by `TreeNode::render`, equals
//! the block under "The tree of a running gateway" in `docs/architecture.md`, line for line.

mod support;

use serde_json::json;
use support::http_fixture::HttpFixture;
use support::providers::Fx;

/// The fenced block of `docs/architecture.md` that follows the marker line.
fn drawn_tree() -> String {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/architecture.md"))
        .expect("docs/architecture.md");
    let marker = "<!-- the tree of tests/supervision_tree.rs -->";
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
    let manifest = std::fs::read_to_string(fx.d.path("fwd/ptc.json")).expect("manifest");
    fx.d.write_file(
        "fwd/ptc.json",
        &manifest.replace("\"fx.echo\"", "\"web.echo\"").replace("\"fx\"", "\"web\""),
    );
    let digest = support::content_pin::of(&fx.d.path("fwd/ptc.json"));
    fx.d.gateway["tools"][0]["expected_application_content_digest"] = json!(digest);
    fx.pin();
    fx
}

#[tokio::test(flavor = "multi_thread")]
async fn the_running_tree_is_the_tree_drawn_in_the_architecture_doc() {
    let up = HttpFixture::start("auth");
    let fx = deployment(&up);
    let gateway = support::start_inproc(&fx.d).await;
    let tree = gateway.domain().tree().await.expect("the tree");
    let rendered = ptc_actors::TreeNode::render(&tree, "domain");
    assert_eq!(rendered, drawn_tree(), "the running tree:\n{rendered}");
    gateway.context().trigger().signal();
    assert_eq!(gateway.serve_until_stopped().await, 0);
    fx.assert_all_gone();
}
