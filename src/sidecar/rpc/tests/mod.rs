//! Transcript-style tests: a toy `RpcModule` served over in-memory pipes.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use jsonrpsee::types::{ErrorObject, ErrorObjectOwned};
use jsonrpsee::RpcModule;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::task::JoinHandle;

use super::*;

mod robustness;

const TIMEOUT: Duration = Duration::from_secs(10);

/// Blocks the `gated` handler until the test opens it.
#[derive(Default)]
struct Gate {
    open: Mutex<bool>,
    changed: Condvar,
}

impl Gate {
    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.changed.notify_all();
    }

    fn wait(&self) {
        let open = self.open.lock().unwrap();
        let _ = self
            .changed
            .wait_timeout_while(open, TIMEOUT, |open| !*open)
            .unwrap();
    }
}

struct Ctx {
    notifier: Notifier,
    shutdown: Shutdown,
    gate: Arc<Gate>,
}

#[derive(Deserialize)]
struct AddParams {
    a: i64,
    b: i64,
}

fn toy_module(ctx: Ctx) -> RpcModule<Ctx> {
    let mut module = RpcModule::new(ctx);
    module
        .register_method("echo", |params, _, _| params.parse::<Value>())
        .unwrap();
    module
        .register_async_method("async_echo", |params, _, _| async move {
            params.parse::<Value>()
        })
        .unwrap();
    module
        .register_method("nothing", |_, _, _| Ok::<_, ErrorObjectOwned>(Value::Null))
        .unwrap();
    module
        .register_method("fail", |_, _, _| {
            Err::<Value, _>(ErrorObject::owned(
                1001,
                "unknown entry id",
                Some(json!({"entryId": "nope"})),
            ))
        })
        .unwrap();
    module
        .register_method("add", |params, _, _| {
            params.parse::<AddParams>().map(|p| p.a + p.b)
        })
        .unwrap();
    module
        .register_blocking_method("slow", |_, ctx, _| {
            ctx.notifier.notify(
                "progress",
                json!({"operation": "scan", "done": 1, "total": 2}),
            );
            std::thread::sleep(Duration::from_millis(20));
            ctx.notifier.notify(
                "progress",
                json!({"operation": "scan", "done": 2, "total": 2}),
            );
            Ok::<_, ErrorObjectOwned>(json!({"slept": true}))
        })
        .unwrap();
    module
        .register_blocking_method("gated", |_, ctx, _| {
            ctx.notifier.notify("progress", json!({"done": 1}));
            ctx.gate.wait();
            ctx.notifier.notify("progress", json!({"done": 2}));
            Ok::<_, ErrorObjectOwned>(json!("opened"))
        })
        .unwrap();
    module
        .register_method("stop", |_, ctx, _| {
            ctx.shutdown.request();
            Ok::<_, ErrorObjectOwned>(json!({}))
        })
        .unwrap();
    module
        .register_method("panic", |_, _, _| -> Result<Value, ErrorObjectOwned> {
            panic!("handler bug")
        })
        .unwrap();
    module
}

/// The host's side of the pipes.
struct Host {
    input: Option<DuplexStream>,
    output: BufReader<DuplexStream>,
    server: JoinHandle<io::Result<()>>,
    shutdown: Shutdown,
    gate: Arc<Gate>,
}

impl Host {
    fn start() -> Self {
        Self::start_with(ServeConfig::default())
    }

    fn start_with(config: ServeConfig) -> Self {
        let (host_in, server_in) = tokio::io::duplex(1 << 20);
        let (server_out, host_out) = tokio::io::duplex(1 << 20);
        let (notifier, outbox) = notifier_channel();
        let shutdown = Shutdown::new();
        let gate = Arc::new(Gate::default());
        let module = toy_module(Ctx {
            notifier,
            shutdown: shutdown.clone(),
            gate: gate.clone(),
        });
        let server = tokio::spawn(serve(
            server_in,
            server_out,
            module.into(),
            outbox,
            shutdown.clone(),
            config,
        ));
        Self {
            input: Some(host_in),
            output: BufReader::new(host_out),
            server,
            shutdown,
            gate,
        }
    }

    async fn send_bytes(&mut self, bytes: &[u8]) {
        let input = self.input.as_mut().expect("input already closed");
        input.write_all(bytes).await.unwrap();
    }

    /// Writes one line (adds the `\n`).
    async fn send(&mut self, line: &str) {
        self.send_bytes(format!("{line}\n").as_bytes()).await;
    }

    /// Reads one raw output line; `None` at EOF.
    async fn recv_raw(&mut self) -> Option<String> {
        let mut line = String::new();
        let n = tokio::time::timeout(TIMEOUT, self.output.read_line(&mut line))
            .await
            .expect("timed out waiting for output")
            .unwrap();
        if n == 0 {
            return None;
        }
        assert!(line.ends_with('\n'), "unterminated output: {line:?}");
        assert_eq!(line.matches('\n').count(), 1);
        Some(line)
    }

    /// Reads and parses one output line.
    async fn recv(&mut self) -> Value {
        let line = self.recv_raw().await.expect("unexpected EOF on output");
        serde_json::from_str(&line).unwrap()
    }

    async fn call(&mut self, line: &str) -> Value {
        self.send(line).await;
        self.recv().await
    }

    /// Closes input (EOF), collects everything still written and checks the server
    /// returned `Ok`.
    async fn finish(mut self) -> Vec<Value> {
        self.input = None;
        self.drain().await
    }

    async fn drain(mut self) -> Vec<Value> {
        let mut rest = Vec::new();
        while let Some(line) = self.recv_raw().await {
            rest.push(serde_json::from_str(&line).unwrap());
        }
        let result = tokio::time::timeout(TIMEOUT, self.server)
            .await
            .expect("server did not stop")
            .unwrap();
        assert!(result.is_ok(), "serve returned {result:?}");
        rest
    }
}

#[tokio::test]
async fn jsonrpc_echoes_ids_exactly() {
    let mut host = Host::start();
    assert_eq!(
        host.call(r#"{"jsonrpc":"2.0","id":7,"method":"echo","params":{"a":1}}"#)
            .await,
        json!({"jsonrpc":"2.0","id":7,"result":{"a":1}})
    );
    assert_eq!(
        host.call(r#"{"jsonrpc":"2.0","id":"abc","method":"echo","params":[1,"x"]}"#)
            .await,
        json!({"jsonrpc":"2.0","id":"abc","result":[1,"x"]})
    );
    assert_eq!(
        host.call(r#"{"jsonrpc":"2.0","id":-3,"method":"echo"}"#)
            .await,
        json!({"jsonrpc":"2.0","id":-3,"result":null})
    );
    assert_eq!(
        host.call(r#"{"jsonrpc":"2.0","id":1.5,"method":"async_echo","params":[true]}"#)
            .await,
        json!({"jsonrpc":"2.0","id":1.5,"result":[true]})
    );
    assert_eq!(
        host.call(r#"{"jsonrpc":"2.0","id":null,"method":"echo","params":null}"#)
            .await,
        json!({"jsonrpc":"2.0","id":null,"result":null})
    );
    assert!(host.finish().await.is_empty());
}

/// Ids are compared as text here: parsing the reply into a `Value` would round the very
/// numbers this is about.
#[tokio::test]
async fn ids_are_echoed_as_written_even_beyond_64_bits() {
    let mut host = Host::start();
    let ids = [
        "100000000000000000000000000000",
        "-100000000000000000000000000000",
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775809",
        "-1",
        "0",
        "-0",
        "1.5",
        "1.50",
        "1e2",
        "1E+2",
        "2.5e-300",
        "\"str\"",
        "null",
    ];
    for id in ids {
        host.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"echo"}}"#))
            .await;
        assert_eq!(
            host.recv_raw().await.as_deref(),
            Some(format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":null}}\n").as_str()),
            "JSON-RPC id {id}"
        );
        host.send(&format!(r#"{{"id":{id},"type":"nothing"}}"#))
            .await;
        assert_eq!(
            host.recv_raw().await.as_deref(),
            Some(
                format!(
                    "{{\"id\":{id},\"type\":\"response\",\"command\":\"nothing\",\"success\":true,\"data\":null}}\n"
                )
                .as_str()
            ),
            "pi id {id}"
        );
    }

    // Errors echo it too: an invalid request, an unknown method, a batch element, and an
    // object that is neither envelope.
    let big = "123456789012345678901234567890";
    host.send(&format!(
        r#"{{"jsonrpc":"1.0","id":{big},"method":"echo"}}"#
    ))
    .await;
    let line = host.recv_raw().await.unwrap_or_default();
    assert!(
        line.starts_with(&format!("{{\"jsonrpc\":\"2.0\",\"id\":{big},\"error\":")),
        "{line}"
    );
    host.send(&format!(
        r#"{{"jsonrpc":"2.0","id":{big},"method":"nope"}}"#
    ))
    .await;
    let line = host.recv_raw().await.unwrap_or_default();
    assert!(
        line.starts_with(&format!("{{\"jsonrpc\":\"2.0\",\"id\":{big},\"error\":")),
        "{line}"
    );
    host.send(&format!(
        r#"[{{"jsonrpc":"2.0","id":1e30,"method":"echo"}},{{"jsonrpc":"2.0","method":"echo"}},{{"jsonrpc":"2.0","id":{big},"method":"nope"}},7,{{"jsonrpc":"2.0","id":-0.0,"method":"echo"}}]"#
    ))
    .await;
    let line = host.recv_raw().await.unwrap_or_default();
    assert!(
        line.starts_with("[{\"jsonrpc\":\"2.0\",\"id\":1e30,\"result\":null},"),
        "{line}"
    );
    assert!(
        line.contains(&format!("{{\"jsonrpc\":\"2.0\",\"id\":{big},\"error\":")),
        "{line}"
    );
    assert!(
        line.contains("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":"),
        "{line}"
    );
    assert!(
        line.ends_with(",{\"jsonrpc\":\"2.0\",\"id\":-0.0,\"result\":null}]\n"),
        "{line}"
    );
    host.send(&format!(r#"{{"id":{big},"method":"echo"}}"#))
        .await;
    let line = host.recv_raw().await.unwrap_or_default();
    assert!(
        line.starts_with(&format!("{{\"jsonrpc\":\"2.0\",\"id\":{big},\"error\":")),
        "{line}"
    );

    // pi ids may be any JSON value; one holding such a number comes back compact.
    host.send(&format!(
        r#"{{"id": {{ "n" : {big} , "l" : [ 1.0 , "a b" ] }},"type":"nothing"}}"#
    ))
    .await;
    assert_eq!(
        host.recv_raw().await.as_deref(),
        Some(
            format!(
                "{{\"id\":{{\"n\":{big},\"l\":[1.0,\"a b\"]}},\"type\":\"response\",\"command\":\"nothing\",\"success\":true,\"data\":null}}\n"
            )
            .as_str()
        )
    );
    host.send(&format!(r#"{{"id":{big},"type":"nope"}}"#)).await;
    let line = host.recv_raw().await.unwrap_or_default();
    assert!(
        line.starts_with(&format!(
            "{{\"id\":{big},\"type\":\"response\",\"command\":\"nope\""
        )),
        "{line}"
    );
    host.send(&format!(r#"{{"id":{big}}}"#)).await;
    let line = host.recv_raw().await.unwrap_or_default();
    assert!(
        line.starts_with(&format!(
            "{{\"id\":{big},\"type\":\"response\",\"command\":\"parse\""
        )),
        "{line}"
    );
    assert!(host.finish().await.is_empty());
}

#[tokio::test]
async fn output_is_compact_json_plus_newline() {
    let mut host = Host::start();
    host.send(
        r#"{ "jsonrpc" : "2.0", "id" : 1, "method" : "echo", "params" : { "s" : "a\u2028b" } }"#,
    )
    .await;
    assert_eq!(
        host.recv_raw().await.unwrap(),
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"s\":\"a\u{2028}b\"}}\n"
    );
    host.send(r#"{"id":"r","type":"echo","x":[1, 2]}"#).await;
    assert_eq!(
        host.recv_raw().await.unwrap(),
        "{\"id\":\"r\",\"type\":\"response\",\"command\":\"echo\",\"success\":true,\"data\":{\"x\":[1,2]}}\n"
    );
    assert!(host.finish().await.is_empty());
}

#[tokio::test]
async fn pi_commands() {
    let mut host = Host::start();
    assert_eq!(
        host.call(r#"{"id":"req-1","type":"echo","paths":["a"],"n":2}"#)
            .await,
        json!({"id":"req-1","type":"response","command":"echo","success":true,"data":{"paths":["a"],"n":2}})
    );
    // No id: none in the reply. Nothing left after id/type: absent params.
    assert_eq!(
        host.call(r#"{"type":"echo"}"#).await,
        json!({"type":"response","command":"echo","success":true,"data":null})
    );
    assert_eq!(
        host.call(r#"{"id":"n","type":"nothing"}"#).await,
        json!({"id":"n","type":"response","command":"nothing","success":true,"data":null})
    );
    assert_eq!(
        host.call(r#"{"id":9,"type":"async_echo","k":"v"}"#).await,
        json!({"id":9,"type":"response","command":"async_echo","success":true,"data":{"k":"v"}})
    );
    assert!(host.finish().await.is_empty());
}

#[tokio::test]
async fn handler_errors_keep_code_message_and_data() {
    let mut host = Host::start();
    assert_eq!(
        host.call(r#"{"jsonrpc":"2.0","id":1,"method":"fail"}"#)
            .await,
        json!({"jsonrpc":"2.0","id":1,"error":{"code":1001,"message":"unknown entry id","data":{"entryId":"nope"}}})
    );
    assert_eq!(
        host.call(r#"{"id":"f","type":"fail"}"#).await,
        json!({"id":"f","type":"response","command":"fail","success":false,
               "error":"unknown entry id","code":1001,"errorData":{"entryId":"nope"}})
    );
    assert!(host.finish().await.is_empty());
}

#[tokio::test]
async fn unknown_methods_and_commands() {
    let mut host = Host::start();
    assert_eq!(
        host.call(r#"{"jsonrpc":"2.0","id":2,"method":"nope"}"#)
            .await,
        json!({"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found: nope"}})
    );
    assert_eq!(
        host.call(r#"{"id":"u","type":"nope","x":1}"#).await,
        json!({"id":"u","type":"response","command":"nope","success":false,
               "error":"Unknown command: nope","code":-32601})
    );
    // A reply-shaped object sent to us is just an unknown command.
    assert_eq!(
        host.call(r#"{"id":"r","type":"response","command":"echo","success":true}"#)
            .await,
        json!({"id":"r","type":"response","command":"response","success":false,
               "error":"Unknown command: response","code":-32601})
    );
    assert!(host.finish().await.is_empty());
}

#[tokio::test]
async fn invalid_params_say_what_is_wrong() {
    let mut host = Host::start();
    let reply = host
        .call(r#"{"jsonrpc":"2.0","id":3,"method":"add","params":{"a":1}}"#)
        .await;
    assert_eq!(reply["error"]["code"], -32602);
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(message.contains("missing field `b`"), "{message}");
    assert!(reply["error"]["data"].as_str().unwrap().contains("`b`"));

    let reply = host.call(r#"{"id":"p","type":"add","a":"x","b":2}"#).await;
    assert_eq!(reply["success"], false);
    assert_eq!(reply["code"], -32602);
    let message = reply["error"].as_str().unwrap();
    assert!(
        message.starts_with("Invalid params: invalid type"),
        "{message}"
    );

    assert_eq!(
        host.call(r#"{"id":"ok","type":"add","a":40,"b":2}"#).await["data"],
        42
    );
    assert!(host.finish().await.is_empty());
}

#[tokio::test]
async fn jsonrpc_notifications_are_never_answered() {
    let mut host = Host::start();
    host.send(r#"{"jsonrpc":"2.0","method":"echo","params":[1]}"#)
        .await;
    host.send(r#"{"jsonrpc":"2.0","method":"fail"}"#).await;
    host.send(r#"{"jsonrpc":"2.0","method":"no_such_method"}"#)
        .await;
    host.send(r#"{"jsonrpc":"2.0","method":"add","params":{}}"#)
        .await;
    // Requests are answered in order, so the first reply must be this one.
    assert_eq!(
        host.call(r#"{"jsonrpc":"2.0","id":"after","method":"echo"}"#)
            .await["id"],
        "after"
    );
    assert!(host.finish().await.is_empty());
}

#[tokio::test]
async fn batches() {
    let mut host = Host::start();
    let reply = host
        .call(concat!(
            r#"[{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]},"#,
            r#"{"jsonrpc":"2.0","method":"echo","params":[2]},"#,
            r#"{"jsonrpc":"2.0","id":"x","method":"nope"},"#,
            r#"{"foo":"bar"},"#,
            r#"5,"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"fail"}]"#
        ))
        .await;
    assert_eq!(
        reply,
        json!([
            {"jsonrpc":"2.0","id":1,"result":[1]},
            {"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"Method not found: nope"}},
            {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: \"jsonrpc\" must be \"2.0\""}},
            {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: batch element must be a request object, got a number"}},
            {"jsonrpc":"2.0","id":4,"error":{"code":1001,"message":"unknown entry id","data":{"entryId":"nope"}}}
        ])
    );

    // All notifications: nothing at all is written.
    host.send(r#"[{"jsonrpc":"2.0","method":"echo"},{"jsonrpc":"2.0","method":"fail"}]"#)
        .await;
    // Empty batch: one error, not an array.
    assert_eq!(
        host.call("[]").await,
        json!({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: empty batch"}})
    );
    // Batches hold JSON-RPC requests only; a pi command inside is an invalid element.
    assert_eq!(
        host.call(r#"[{"id":"a","type":"echo"}]"#).await[0]["error"]["code"],
        -32600
    );
    assert!(host.finish().await.is_empty());
}

#[tokio::test]
async fn invalid_jsonrpc_requests() {
    let mut host = Host::start();
    let cases = [
        (
            r#"{"jsonrpc":"1.0","id":1,"method":"echo"}"#,
            json!(1),
            "\"jsonrpc\" must be \"2.0\"",
        ),
        (
            r#"{"jsonrpc":"2.0","id":2,"method":5}"#,
            json!(2),
            "\"method\" must be a string",
        ),
        (
            r#"{"jsonrpc":"2.0","id":3}"#,
            json!(3),
            "missing \"method\"",
        ),
        (
            r#"{"jsonrpc":"2.0","id":4,"method":"echo","params":"x"}"#,
            json!(4),
            "\"params\" must be an object or an array",
        ),
        (
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"echo"}"#,
            Value::Null,
            "\"id\" must be a number, a string or null",
        ),
        (
            r#"{"jsonrpc":"2.0","method":7}"#,
            Value::Null,
            "\"method\" must be a string",
        ),
    ];
    for (line, id, reason) in cases {
        let reply = host.call(line).await;
        assert_eq!(reply["id"], id, "{line}");
        assert_eq!(reply["error"]["code"], -32600, "{line}");
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(message.contains(reason), "{line}: {message}");
    }
    assert!(host.finish().await.is_empty());
}
