//! Envelopes and dispatch: reads framed lines, recognises JSON-RPC 2.0 and pi-style
//! commands, runs them through a `jsonrpsee::Methods` table and writes the replies.
//!
//! Ordering model: requests are processed one at a time in arrival order (each method's
//! response is awaited before the next line is read), which is the simplest way to satisfy
//! "mutating requests are applied in the order received". Everything written goes through
//! one channel (the [`Outbox`]) drained by one writer task, so a notification a handler
//! emits is written before that request's response, and progress notifications flow out
//! while a blocking handler is still running.

pub mod codes;
mod envelope;
#[cfg(test)]
mod tests;

use std::io;
use std::time::Instant;

use jsonrpsee::core::traits::ToRpcParams;
use jsonrpsee::types::ErrorObjectOwned;
use jsonrpsee::{Methods, MethodsError};
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, watch};

use crate::sidecar::transport::{Line, LineReader, LineWriter, DEFAULT_MAX_LINE_BYTES};
use envelope::{
    Envelope, EnvelopeMemory, ExactIds, Id, Incoming, JsonRpcRequest, JsonRpcResponse, PiCommand,
    PiResponse,
};

/// Settings for [`serve`].
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// Longest accepted input line in bytes; longer lines are answered with -32600 and
    /// skipped without being buffered.
    pub max_line_bytes: usize,
}

impl Default for ServeConfig {
    fn default() -> Self {
        Self {
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
        }
    }
}

/// One item for the writer task.
#[derive(Debug)]
enum Outgoing {
    /// Compact JSON without the trailing newline.
    Message(Vec<u8>),
    /// Everything queued before this has been handed over: flush and stop.
    Close,
}

/// Sends server-initiated notifications (`files_changed`, `progress`). Handlers hold a
/// clone; it is cheap and can be used from blocking threads.
#[derive(Debug, Clone)]
pub struct Notifier {
    tx: mpsc::UnboundedSender<Outgoing>,
    envelope: EnvelopeMemory,
}

impl Notifier {
    /// Queues a notification, written in the envelope of the most recent well-formed
    /// request: `{"jsonrpc":"2.0","method":..,"params":..}` or `{"type":method, ..fields}`.
    /// Never blocks. After `serve` has returned the notification is dropped.
    pub fn notify(&self, method: &str, params: Value) {
        let message = envelope::notification(self.envelope.get(), method, params);
        match encode(&message) {
            Some(bytes) => {
                if self.tx.send(Outgoing::Message(bytes)).is_err() {
                    tracing::debug!(method, "notification dropped: output is closed");
                }
            }
            None => tracing::error!(method, "notification dropped: not serializable"),
        }
    }
}

/// The receiving end of the output channel, consumed by [`serve`]. Responses are sent on
/// the same channel as notifications so that their relative order is preserved.
#[derive(Debug)]
pub struct Outbox {
    rx: mpsc::UnboundedReceiver<Outgoing>,
    tx: mpsc::UnboundedSender<Outgoing>,
    envelope: EnvelopeMemory,
}

/// Creates the notification channel: give the `Notifier` to the handlers' context and the
/// `Outbox` to [`serve`].
pub fn notifier_channel() -> (Notifier, Outbox) {
    // Unbounded so that `notify` never blocks a handler; the volume is small (progress
    // is rate-limited by the handlers, at most every 100 ms).
    let (tx, rx) = mpsc::unbounded_channel();
    let envelope = EnvelopeMemory::default();
    let notifier = Notifier {
        tx: tx.clone(),
        envelope: envelope.clone(),
    };
    (notifier, Outbox { rx, tx, envelope })
}

/// A shared "please stop" flag. A handler (e.g. `shutdown`) calls [`Shutdown::request`];
/// `serve` writes that request's response, flushes and returns without reading further.
/// Requesting it from elsewhere (e.g. a signal handler) also stops a `serve` that is
/// waiting for input.
#[derive(Debug, Clone)]
pub struct Shutdown {
    // A watch channel rather than a bare flag so that `serve` can also wait on it while
    // blocked on input.
    tx: std::sync::Arc<watch::Sender<bool>>,
}

impl Default for Shutdown {
    fn default() -> Self {
        Self::new()
    }
}

impl Shutdown {
    pub fn new() -> Self {
        let (tx, _rx) = watch::channel(false);
        Self {
            tx: std::sync::Arc::new(tx),
        }
    }

    pub fn request(&self) {
        self.tx.send_replace(true);
    }

    pub fn is_requested(&self) -> bool {
        *self.tx.borrow()
    }

    /// Completes once shutdown has been requested.
    pub async fn requested(&self) {
        let mut rx = self.tx.subscribe();
        // Errors only if the sender is gone, which cannot happen while `self` holds it.
        let _ = rx.wait_for(|requested| *requested).await;
    }
}

/// Serves requests from `input` until EOF or shutdown, writing replies and notifications
/// to `output`. Returns `Ok` on EOF or shutdown after everything queued has been written
/// and flushed; returns an error only if reading or writing the streams fails.
pub async fn serve<R, W>(
    input: R,
    output: W,
    methods: Methods,
    outbox: Outbox,
    shutdown: Shutdown,
    config: ServeConfig,
) -> io::Result<()>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let Outbox { rx, tx, envelope } = outbox;
    // Its own task, so notifications are written while a request is still running.
    let writer = tokio::spawn(write_loop(LineWriter::new(output), rx));
    let server = Dispatcher {
        methods,
        out: tx,
        envelope,
        max_line_bytes: config.max_line_bytes,
    };
    let mut reader = LineReader::with_max_line_bytes(input, config.max_line_bytes);
    let read_result = server.read_loop(&mut reader, &shutdown).await;

    // Notifier clones keep the channel open, so closing is an explicit message; it is
    // queued after every reply, which are therefore written first.
    let _ = server.out.send(Outgoing::Close);
    let write_result = match writer.await {
        Ok(result) => result,
        Err(join_error) => Err(io::Error::other(join_error)),
    };
    if let Err(error) = &write_result {
        tracing::warn!(%error, "writing output failed");
    }
    read_result.and(write_result)
}

async fn write_loop<W: AsyncWrite + Unpin>(
    mut writer: LineWriter<W>,
    mut rx: mpsc::UnboundedReceiver<Outgoing>,
) -> io::Result<()> {
    while let Some(item) = rx.recv().await {
        match item {
            Outgoing::Message(bytes) => writer.write_line(bytes).await?,
            Outgoing::Close => break,
        }
    }
    writer.flush().await
}

/// Serialises compact JSON; `None` only for values serde_json cannot represent (which
/// our envelopes, built from `serde_json::Value`, never contain).
fn encode<T: Serialize>(message: &T) -> Option<Vec<u8>> {
    serde_json::to_vec(message).ok()
}

/// The writer task is gone (the output failed); stop serving.
struct OutputClosed;

/// The request loop: the methods, the writer's queue, the envelope in use.
struct Dispatcher {
    methods: Methods,
    out: mpsc::UnboundedSender<Outgoing>,
    envelope: EnvelopeMemory,
    max_line_bytes: usize,
}

impl Dispatcher {
    async fn read_loop<R: AsyncRead + Unpin>(
        &self,
        reader: &mut LineReader<R>,
        shutdown: &Shutdown,
    ) -> io::Result<()> {
        loop {
            if shutdown.is_requested() {
                tracing::debug!("shutdown requested; not reading further input");
                return Ok(());
            }
            let line = tokio::select! {
                biased;
                () = shutdown.requested() => continue,
                // The writer died (output failed): nobody would see our replies.
                () = self.out.closed() => return Ok(()),
                line = reader.next_line() => line?,
            };
            let handled = match line {
                None => {
                    tracing::debug!("EOF on input");
                    return Ok(());
                }
                Some(Line::TooLong { len }) => self.reply_too_long(len),
                Some(Line::Data(bytes)) => self.handle_line(&bytes).await,
            };
            if handled.is_err() {
                // The writer failed; its error is what `serve` reports.
                return Ok(());
            }
        }
    }

    fn send<T: Serialize>(&self, message: &T) -> Result<(), OutputClosed> {
        match encode(message) {
            Some(bytes) => self
                .out
                .send(Outgoing::Message(bytes))
                .map_err(|_| OutputClosed),
            None => {
                tracing::error!("reply dropped: not serializable");
                Ok(())
            }
        }
    }

    async fn handle_line(&self, bytes: &[u8]) -> Result<(), OutputClosed> {
        tracing::trace!(bytes = bytes.len(), "input line");
        let value: Value = match serde_json::from_slice(bytes) {
            Ok(value) => value,
            Err(error) => {
                tracing::warn!(%error, bytes = bytes.len(), "unparseable input line");
                return self.reply_malformed(None, envelope::PARSE_ERROR, &error.to_string());
            }
        };
        let exact_ids = ExactIds::find(&value, bytes);
        match envelope::classify(value, &exact_ids) {
            Incoming::JsonRpc(Ok(request)) => {
                self.envelope.set(Envelope::JsonRpc);
                match self.run_jsonrpc(request).await {
                    Some(response) => self.send(&response),
                    None => Ok(()),
                }
            }
            Incoming::JsonRpc(Err(invalid)) => {
                tracing::warn!(reason = %invalid.reason, "invalid JSON-RPC request");
                self.send(&JsonRpcResponse::new(
                    invalid.id,
                    Err(invalid_request(&invalid.reason)),
                ))
            }
            Incoming::Batch(items) => {
                self.envelope.set(Envelope::JsonRpc);
                let mut responses = Vec::new();
                for (index, item) in items.into_iter().enumerate() {
                    let response = match envelope::parse_jsonrpc_value(item, &exact_ids, index) {
                        Ok(request) => self.run_jsonrpc(request).await,
                        Err(invalid) => {
                            tracing::warn!(reason = %invalid.reason, "invalid batch element");
                            Some(JsonRpcResponse::new(
                                invalid.id,
                                Err(invalid_request(&invalid.reason)),
                            ))
                        }
                    };
                    responses.extend(response);
                }
                // A batch of notifications gets no reply at all (JSON-RPC 2.0 §6).
                if responses.is_empty() {
                    Ok(())
                } else {
                    self.send(&responses)
                }
            }
            Incoming::EmptyBatch => {
                tracing::warn!("empty JSON-RPC batch");
                self.send(&JsonRpcResponse::new(
                    Id::null(),
                    Err(invalid_request("empty batch")),
                ))
            }
            Incoming::Pi(command) => {
                self.envelope.set(Envelope::Pi);
                let response = self.run_pi(command).await;
                self.send(&response)
            }
            Incoming::Neither { id, reason } => {
                tracing::warn!(%reason, "input is neither a JSON-RPC request nor a command");
                self.reply_malformed(id, envelope::INVALID_REQUEST, &reason)
            }
        }
    }

    fn reply_too_long(&self, len: usize) -> Result<(), OutputClosed> {
        let detail = format!(
            "line of {len} bytes exceeds the maximum line length of {} bytes",
            self.max_line_bytes
        );
        tracing::warn!(
            len,
            max = self.max_line_bytes,
            "over-long input line skipped"
        );
        self.reply_malformed(None, envelope::INVALID_REQUEST, &detail)
    }

    /// Answers input that is not a usable request in the envelope of the most recent
    /// well-formed request.
    fn reply_malformed(&self, id: Option<Id>, code: i32, detail: &str) -> Result<(), OutputClosed> {
        match self.envelope.get() {
            Envelope::JsonRpc => {
                let message = if code == envelope::PARSE_ERROR {
                    format!("Parse error: {detail}")
                } else {
                    format!("Invalid request: {detail}")
                };
                // Only ids JSON-RPC allows are echoed; anything else could not be matched.
                let id = id.filter(Id::is_number_or_string).unwrap_or_else(Id::null);
                self.send(&JsonRpcResponse::new(
                    id,
                    Err(envelope::error(code, message)),
                ))
            }
            Envelope::Pi => self.send(&PiResponse::parse_failure(id, code, detail)),
        }
    }

    /// Runs one JSON-RPC request; `None` for notifications, which are never answered.
    async fn run_jsonrpc(&self, request: JsonRpcRequest) -> Option<JsonRpcResponse> {
        let JsonRpcRequest { id, method, params } = request;
        let started = Instant::now();
        let outcome = if self.methods.method(&method).is_some() {
            call_method(&self.methods, &method, params).await
        } else {
            Err(envelope::error(
                envelope::METHOD_NOT_FOUND,
                format!("Method not found: {method}"),
            ))
        };
        log_request("jsonrpc", &method, id.as_ref(), started, &outcome);
        id.map(|id| JsonRpcResponse::new(id, outcome))
    }

    async fn run_pi(&self, command: PiCommand) -> PiResponse {
        let PiCommand {
            id,
            command,
            params,
        } = command;
        let started = Instant::now();
        let outcome = if self.methods.method(&command).is_some() {
            call_method(&self.methods, &command, params).await
        } else {
            Err(envelope::error(
                envelope::METHOD_NOT_FOUND,
                format!("Unknown command: {command}"),
            ))
        };
        log_request("pi", &command, id.as_ref(), started, &outcome);
        PiResponse::new(id, command, outcome)
    }
}

fn invalid_request(reason: &str) -> ErrorObjectOwned {
    envelope::error(
        envelope::INVALID_REQUEST,
        format!("Invalid request: {reason}"),
    )
}

fn log_request(
    envelope: &str,
    method: &str,
    id: Option<&Id>,
    started: Instant,
    outcome: &Result<Value, ErrorObjectOwned>,
) {
    let elapsed = started.elapsed();
    let id = id.map(ToString::to_string);
    match outcome {
        Ok(_) => tracing::debug!(envelope, method, id, ?elapsed, "request succeeded"),
        Err(error) => tracing::debug!(
            envelope,
            method,
            id,
            ?elapsed,
            code = error.code(),
            message = error.message(),
            "request failed"
        ),
    }
}

/// Params handed to `Methods::call` exactly as received (jsonrpsee has no impl for
/// "already JSON, possibly absent").
struct RawParams(Option<Box<RawValue>>);

impl ToRpcParams for RawParams {
    fn to_rpc_params(self) -> Result<Option<Box<RawValue>>, serde_json::Error> {
        Ok(self.0)
    }
}

/// Calls a registered method through jsonrpsee's public `Methods::call`, which handles
/// every callback kind (`register_method`, `register_async_method`,
/// `register_blocking_method`) and hands back the handler's `ErrorObjectOwned` intact.
///
/// The call runs in its own task so that a panicking handler becomes an internal error
/// instead of taking the server down; it is still awaited before the next request.
async fn call_method(
    methods: &Methods,
    method: &str,
    params: Option<Value>,
) -> Result<Value, ErrorObjectOwned> {
    let params = match params {
        Some(params) => Some(serde_json::value::to_raw_value(&params).map_err(internal_error)?),
        None => None,
    };
    let methods = methods.clone();
    let name = method.to_owned();
    let task =
        tokio::spawn(async move { methods.call::<_, Value>(&name, RawParams(params)).await });
    match task.await {
        Ok(Ok(result)) => Ok(result),
        Ok(Err(MethodsError::JsonRpc(error))) => Err(envelope::explain(error)),
        Ok(Err(other)) => Err(internal_error(other)),
        Err(join_error) => {
            tracing::error!(method, error = %join_error, "method handler panicked");
            Err(envelope::error(
                envelope::INTERNAL_ERROR,
                format!("Internal error: handler for {method} failed"),
            ))
        }
    }
}

fn internal_error(error: impl std::fmt::Display) -> ErrorObjectOwned {
    envelope::error(envelope::INTERNAL_ERROR, format!("Internal error: {error}"))
}
