//! What goes wrong on the wire: malformed and over-long lines, garbage,
//! notification order under load, end of input, shutdown, panics and a
//! closed output.

use super::*;

#[tokio::test]
async fn malformed_lines_use_the_envelope_of_the_last_good_request() {
    let mut host = Host::start();
    // Before any request: JSON-RPC.
    let reply = host.call("not json").await;
    assert_eq!(reply["jsonrpc"], "2.0");
    assert_eq!(reply["id"], Value::Null);
    assert_eq!(reply["error"]["code"], -32700);
    assert!(reply["error"]["message"]
        .as_str()
        .unwrap()
        .starts_with("Parse error: "));
    // Valid JSON, neither envelope.
    assert_eq!(
        host.call("42").await,
        json!({"jsonrpc":"2.0","id":null,"error":{"code":-32600,
               "message":"Invalid request: expected a JSON object or array, got a number"}})
    );
    assert_eq!(host.call(r#"{"id":5,"type":1}"#).await["id"], 5);

    // After a pi command: pi-style.
    host.call(r#"{"id":"a","type":"echo"}"#).await;
    let reply = host.call("{oops").await;
    assert_eq!(reply["type"], "response");
    assert_eq!(reply["command"], "parse");
    assert_eq!(reply["success"], false);
    assert_eq!(reply["code"], -32700);
    assert!(reply.get("id").is_none());
    assert!(reply["error"]
        .as_str()
        .unwrap()
        .starts_with("Failed to parse command: "));
    let reply = host.call(r#"{"id":"q","kind":"echo"}"#).await;
    assert_eq!(reply["command"], "parse");
    assert_eq!(reply["id"], "q");
    assert_eq!(reply["code"], -32600);

    // A failed pi command is still a well-formed request; so is a JSON-RPC notification.
    host.call(r#"{"id":"b","type":"nope"}"#).await;
    assert_eq!(host.call("]").await["command"], "parse");
    host.send(r#"{"jsonrpc":"2.0","method":"echo"}"#).await;
    assert_eq!(host.call("]").await["error"]["code"], -32700);

    // An invalid JSON-RPC request is not well-formed: memory stays JSON-RPC here, and
    // after switching to pi it stays pi.
    host.call(r#"{"id":"c","type":"echo"}"#).await;
    host.call(r#"{"jsonrpc":"1.0","id":1,"method":"echo"}"#)
        .await;
    assert_eq!(host.call("]").await["command"], "parse");
    assert!(host.finish().await.is_empty());
}

#[tokio::test]
async fn over_long_lines_are_answered_and_skipped() {
    let mut host = Host::start_with(ServeConfig { max_line_bytes: 64 });
    let long = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"echo","params":["{}"]}}"#,
        "x".repeat(100)
    );
    let reply = host.call(&long).await;
    assert_eq!(reply["id"], Value::Null);
    assert_eq!(reply["error"]["code"], -32600);
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(message.contains("exceeds the maximum line length of 64 bytes"));
    assert_eq!(
        host.call(r#"{"jsonrpc":"2.0","id":2,"method":"echo"}"#)
            .await["id"],
        2
    );

    host.call(r#"{"id":"a","type":"echo"}"#).await;
    let reply = host.call(&long).await;
    assert_eq!(reply["command"], "parse");
    assert_eq!(reply["code"], -32600);
    assert!(reply["error"]
        .as_str()
        .unwrap()
        .contains("exceeds the maximum line length of 64 bytes"));
    assert_eq!(host.call(r#"{"id":"b","type":"echo"}"#).await["id"], "b");
    assert!(host.finish().await.is_empty());
}

#[tokio::test]
async fn garbage_never_crashes_the_server() {
    let mut host = Host::start();
    let deep_array = "[".repeat(100_000);
    let deep_object = r#"{"a":"#.repeat(10_000);
    let deep_params = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"echo","params":{}1{}}}"#,
        "[".repeat(126),
        "]".repeat(126)
    );
    let garbage: Vec<&[u8]> = vec![
        b"\xff\xfe\xfd",
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[\"\xc3\x28\"]}",
        b"\x00\x00\x00",
        b"{\"a\":\"\x00\"}",
        b"\r",
        b"{\"a\":1}\r{\"b\":2}",
        deep_array.as_bytes(),
        deep_object.as_bytes(),
        b"1e999999",
        b"[1e999999]",
        b"{\"jsonrpc\":\"2.0\",\"id\":1e999,\"method\":\"echo\"}",
        b"{\"jsonrpc\":\"2.0\",\"id\":123456789012345678901234567890,\"method\":\"echo\"}",
        b"{\"jsonrpc\":\"2.0\"",
        b"\"\\ud800\"",
        b"{\"type\":\"echo\",\"id\":\"\\ud800\"}",
        b"null",
        b"[[]]",
        deep_params.as_bytes(),
    ];
    for bytes in garbage {
        host.send_bytes(bytes).await;
        host.send_bytes(b"\n").await;
    }
    host.send(r#"{"jsonrpc":"2.0","id":"alive","method":"echo"}"#)
        .await;
    let mut replies = Vec::new();
    loop {
        let reply = host.recv().await;
        let done = reply["id"] == "alive";
        replies.push(reply);
        if done {
            break;
        }
    }
    // "\r" alone is a blank line (skipped) and the huge-but-finite id is valid: everything
    // else got exactly one reply.
    assert_eq!(replies.len(), 18, "{replies:#?}");
    assert!(host.finish().await.is_empty());
}

// Multi-threaded like the real binary, so the writer task runs in parallel.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notifications_precede_the_response_in_the_requests_envelope() {
    let mut host = Host::start();
    host.send(r#"{"jsonrpc":"2.0","id":1,"method":"slow"}"#)
        .await;
    assert_eq!(
        host.recv().await,
        json!({"jsonrpc":"2.0","method":"progress","params":{"operation":"scan","done":1,"total":2}})
    );
    assert_eq!(host.recv().await["params"]["done"], 2);
    assert_eq!(
        host.recv().await,
        json!({"jsonrpc":"2.0","id":1,"result":{"slept":true}})
    );

    host.send(r#"{"id":"s","type":"slow"}"#).await;
    assert_eq!(
        host.recv().await,
        json!({"type":"progress","operation":"scan","done":1,"total":2})
    );
    assert_eq!(host.recv().await["done"], 2);
    assert_eq!(
        host.recv().await,
        json!({"id":"s","type":"response","command":"slow","success":true,"data":{"slept":true}})
    );
    assert!(host.finish().await.is_empty());
}

// Multi-threaded like the real binary, so the writer task runs in parallel.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_flows_while_a_blocking_handler_runs() {
    let mut host = Host::start();
    host.send(r#"{"jsonrpc":"2.0","id":1,"method":"gated"}"#)
        .await;
    // The handler is parked on the gate; its first notification is already out.
    assert_eq!(host.recv().await["params"]["done"], 1);
    host.gate.open();
    assert_eq!(host.recv().await["params"]["done"], 2);
    assert_eq!(host.recv().await["result"], "opened");
    assert!(host.finish().await.is_empty());
}

#[tokio::test]
async fn eof_processes_the_final_unterminated_line() {
    let mut host = Host::start();
    host.send_bytes(br#"{"jsonrpc":"2.0","id":1,"method":"slow"}"#)
        .await;
    let rest = host.finish().await;
    assert_eq!(rest.len(), 3);
    assert_eq!(
        rest[2],
        json!({"jsonrpc":"2.0","id":1,"result":{"slept":true}})
    );
}

#[tokio::test]
async fn shutdown_request_stops_reading() {
    let mut host = Host::start();
    host.send(concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"stop"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"echo"}"#
    ))
    .await;
    // The server stops without EOF on its input: drain() sees its output close.
    let rest = host.drain().await;
    assert_eq!(rest, vec![json!({"jsonrpc":"2.0","id":1,"result":{}})]);

    let mut host = Host::start();
    host.send(r#"{"id":"bye","type":"stop"}"#).await;
    host.send(r#"{"id":"late","type":"echo"}"#).await;
    let rest = host.drain().await;
    assert_eq!(
        rest,
        vec![json!({"id":"bye","type":"response","command":"stop","success":true,"data":{}})]
    );
}

#[tokio::test]
async fn shutdown_from_outside_stops_a_server_waiting_for_input() {
    let mut host = Host::start();
    assert_eq!(host.call(r#"{"type":"echo"}"#).await["success"], true);
    host.shutdown.request();
    assert!(host.drain().await.is_empty());
}

#[tokio::test]
async fn panicking_handler_is_an_internal_error() {
    let mut host = Host::start();
    let reply = host
        .call(r#"{"jsonrpc":"2.0","id":1,"method":"panic"}"#)
        .await;
    assert_eq!(reply["error"]["code"], -32603);
    assert_eq!(
        host.call(r#"{"jsonrpc":"2.0","id":2,"method":"echo"}"#)
            .await["id"],
        2
    );
    assert!(host.finish().await.is_empty());
}

#[tokio::test]
async fn closed_output_ends_serve_with_an_error() {
    let (mut host_in, server_in) = tokio::io::duplex(1024);
    let (server_out, host_out) = tokio::io::duplex(1024);
    drop(host_out);
    let (_notifier, outbox) = notifier_channel();
    let server = tokio::spawn(serve(
        server_in,
        server_out,
        Methods::new(),
        outbox,
        Shutdown::new(),
        ServeConfig::default(),
    ));
    host_in.write_all(b"[]\n").await.unwrap();
    let result = tokio::time::timeout(TIMEOUT, server)
        .await
        .unwrap()
        .unwrap();
    assert!(result.is_err());
}

#[tokio::test]
async fn notify_after_serve_returned_is_harmless() {
    let (notifier, outbox) = notifier_channel();
    serve(
        &b""[..],
        tokio::io::sink(),
        Methods::new(),
        outbox,
        Shutdown::new(),
        ServeConfig::default(),
    )
    .await
    .unwrap();
    notifier.notify("progress", json!({"done": 1}));
}
