//! Streamed sample downloads (`GET /api/runs/{id}/samples` and `/export`): a blocking worker
//! reads the run a page of chunks at a time, encodes each page (CSV, JSON rows, columnar JSON
//! or Parquet row groups) and passes it down a channel two pages deep, which the response body
//! drains as the client reads. The first bytes leave before the second page is read, and the
//! server holds at most a few pages of one export, however long the run.

use super::error::ApiError;
use super::schema::{only, response};
use aide::OperationOutput;
use aide::generate::GenContext;
use aide::openapi::{Operation, Response as DocResponse, StatusCode as DocStatus};
use axum::body::{Body, Bytes};
use axum::http::StatusCode;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use run_store::{Encoder, ExportOptions, Format, Run, SamplePages, SampleQuery, SampleSet, Store};
use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};
use tokio::runtime::Handle;
use tokio::sync::{Semaphore, mpsc};

/// Pages encoded ahead of the client.
const IN_FLIGHT: usize = 2;

/// Downloads at a time; one more is told to come back (503).
const DOWNLOADS: usize = 4;

/// What to send.
#[derive(Clone, Copy, Debug)]
pub enum Shape {
    /// CSV or the row-wise JSON document of `bench runs export`.
    Rows(Format, ExportOptions),
    /// `{"models", "idx", "t", ..., "outputs": {id: [...]}}`, a column at a time.
    Columns,
    /// A Parquet file, a row group at a time.
    Parquet,
}

type Page = Result<Bytes, std::io::Error>;

fn downloads() -> Arc<Semaphore> {
    static PERMITS: OnceLock<Arc<Semaphore>> = OnceLock::new();
    PERMITS
        .get_or_init(|| Arc::new(Semaphore::new(DOWNLOADS)))
        .clone()
}

/// Samples or a whole run sent as they are read: `GET /api/runs/{id}/samples` (columnar JSON or
/// CSV) and `GET /api/runs/{id}/export` (a CSV, JSON or Parquet file).
#[derive(Debug)]
pub enum Download {
    /// Samples, in `content_type`.
    Samples {
        /// `application/json` or `text/csv`.
        content_type: &'static str,
        /// The stream.
        body: Body,
    },
    /// A file to save.
    File {
        /// Its type.
        content_type: &'static str,
        /// Its name.
        name: String,
        /// The stream.
        body: Body,
    },
}

impl Download {
    /// Samples.
    pub fn samples(content_type: &'static str, body: Body) -> Download {
        Download::Samples { content_type, body }
    }

    /// A file called `name`.
    pub fn file(content_type: &'static str, name: String, body: Body) -> Download {
        Download::File {
            content_type,
            name,
            body,
        }
    }
}

impl IntoResponse for Download {
    fn into_response(self) -> Response {
        match self {
            Download::Samples { content_type, body } => {
                ([(header::CONTENT_TYPE, content_type)], body).into_response()
            }
            Download::File {
                content_type,
                name,
                body,
            } => {
                let disposition = format!("attachment; filename=\"{name}\"");
                let headers = [
                    (header::CONTENT_TYPE, content_type.to_string()),
                    (header::CONTENT_DISPOSITION, disposition),
                ];
                (headers, body).into_response()
            }
        }
    }
}

impl OperationOutput for Download {
    type Inner = ();

    fn operation_response(_: &mut GenContext, _: &mut Operation) -> Option<DocResponse> {
        let binary = schemars::json_schema!({"type": "string", "contentEncoding": "binary"});
        let content = vec![
            (
                "application/json",
                schemars::json_schema!({"type": "object"}),
            ),
            ("text/csv", schemars::json_schema!({"type": "string"})),
            ("application/vnd.apache.parquet", binary),
        ];
        let what = "columnar JSON {models, idx, t, x, v, u_cmd, torque_motor, torque_sensor, \
            segment, flags, outputs: {model: [...]}} (NaN as null), CSV, or the export file";
        Some(response(what, content))
    }

    fn inferred_responses(
        ctx: &mut GenContext,
        op: &mut Operation,
    ) -> Vec<(Option<DocStatus>, DocResponse)> {
        only(200, Self::operation_response(ctx, op))
    }
}

/// The body of a download of `run`'s samples that `q` selects, streamed; errors before the
/// first byte (no such run, too many downloads) are answered as such.
pub async fn body(store: Store, run: Run, q: SampleQuery, shape: Shape) -> Result<Body, ApiError> {
    let permit = downloads().try_acquire_owned().map_err(|_| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            None,
            format!("{DOWNLOADS} sample downloads are already going: try again when one ends"),
        )
    })?;
    let pages = store
        .sample_pages(run.id, &q)
        .await
        .map_err(ApiError::store)?;
    let (tx, rx) = mpsc::channel::<Page>(IN_FLIGHT);
    let handle = Handle::current();
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let sink = Sink(tx);
        let done = match shape {
            Shape::Rows(format, opts) => rows(&handle, pages, &run, format, opts, &sink),
            Shape::Columns => columns(&handle, &store, pages, &run, q, &sink),
            Shape::Parquet => parquet(&handle, pages, &run, &sink),
        };
        if let Err(e) = done {
            // The status has gone out already: the client sees the body end early.
            tracing::warn!("download of run {}: {e:#}", run.id);
            sink.fail(e);
        }
    });
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|page| (page, rx))
    });
    Ok(Body::from_stream(stream))
}

/// The sending end: `send` waits for the client (that is what bounds the memory) and fails
/// once the client has gone.
struct Sink(mpsc::Sender<Page>);

impl Sink {
    fn send(&self, bytes: Vec<u8>) -> anyhow::Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        self.0
            .blocking_send(Ok(Bytes::from(bytes)))
            .map_err(|_| anyhow::anyhow!("the client went away"))
    }

    fn fail(&self, e: anyhow::Error) {
        let _ = self
            .0
            .blocking_send(Err(std::io::Error::other(format!("{e:#}"))));
    }
}

fn next(handle: &Handle, pages: &mut SamplePages) -> anyhow::Result<Option<SampleSet>> {
    Ok(handle.block_on(pages.next_page())?)
}

fn rows(
    handle: &Handle,
    mut pages: SamplePages,
    run: &Run,
    format: Format,
    opts: ExportOptions,
    sink: &Sink,
) -> anyhow::Result<()> {
    let mut encoder = Encoder::new(format, opts);
    sink.send(encoder.header(run, pages.models())?)?;
    while let Some(set) = next(handle, &mut pages)? {
        sink.send(encoder.page(&set)?)?;
    }
    sink.send(encoder.end())
}

/// The columnar JSON document, one column per pass over the pages.
fn columns(
    handle: &Handle,
    store: &Store,
    first: SamplePages,
    run: &Run,
    q: SampleQuery,
    sink: &Sink,
) -> anyhow::Result<()> {
    let models = first.models().to_vec();
    let mut head = b"{\"models\":".to_vec();
    serde_json::to_writer(&mut head, &models)?;
    sink.send(head)?;
    let sample_columns: [(&str, Column); 9] = [
        ("idx", |s, i| s.idx[i].into()),
        ("t", |s, i| num(s.samples[i].t)),
        ("x", |s, i| num(s.samples[i].x)),
        ("v", |s, i| num(s.samples[i].v)),
        ("u_cmd", |s, i| num(s.samples[i].u_cmd)),
        ("torque_motor", |s, i| num(s.samples[i].torque_motor)),
        ("torque_sensor", |s, i| num(s.samples[i].torque_sensor)),
        ("segment", |s, i| s.samples[i].segment.into()),
        ("flags", |s, i| s.samples[i].flags.into()),
    ];
    let mut pages = Some(first);
    if let Some(texts) = one_pass(handle, &mut pages, &sample_columns, models.len())? {
        let mut texts = texts.into_iter();
        for ((name, _), text) in sample_columns.iter().zip(texts.by_ref()) {
            sink.send(format!(",\"{name}\":[").into_bytes())?;
            sink.send(text)?;
            sink.send(b"]".to_vec())?;
        }
        sink.send(b",\"outputs\":{".to_vec())?;
        for (m, (id, text)) in models.iter().zip(texts).enumerate() {
            let mut key = if m == 0 { Vec::new() } else { b",".to_vec() };
            serde_json::to_writer(&mut key, id)?;
            key.extend_from_slice(b":[");
            sink.send(key)?;
            sink.send(text)?;
            sink.send(b"]".to_vec())?;
        }
        return sink.send(b"}}".to_vec());
    }
    // Too large to hold: one pass over the store per column.
    for (name, value) in sample_columns {
        sink.send(format!(",\"{name}\":[").into_bytes())?;
        column(handle, store, &mut pages, run, q, sink, value)?;
        sink.send(b"]".to_vec())?;
    }
    sink.send(b",\"outputs\":{".to_vec())?;
    for (m, id) in models.iter().enumerate() {
        let mut key = if m == 0 { Vec::new() } else { b",".to_vec() };
        serde_json::to_writer(&mut key, id)?;
        key.extend_from_slice(b":[");
        sink.send(key)?;
        column(handle, store, &mut pages, run, q, sink, |s, i| {
            num(s.outputs_at(i)[m])
        })?;
        sink.send(b"]".to_vec())?;
    }
    sink.send(b"}}".to_vec())
}

/// The most JSON text a columnar answer may hold in memory to be read in one pass over the
/// store (a decimated plot's worth); a larger one is read once per column instead, so that the
/// server's memory stays bounded whatever the run's length.
const ONE_PASS_BYTES: usize = 16 << 20;

/// A column of the columnar answer: the value of sample `i` of a page.
type Column = fn(&SampleSet, usize) -> serde_json::Value;

/// Every column's comma-separated values in one pass over `pages`, or `None` (the pages spent)
/// once they pass [`ONE_PASS_BYTES`].
fn one_pass(
    handle: &Handle,
    pages: &mut Option<SamplePages>,
    sample_columns: &[(&str, Column)],
    models: usize,
) -> anyhow::Result<Option<Vec<Vec<u8>>>> {
    let Some(mut pass) = pages.take() else {
        return Ok(None);
    };
    let push = |text: &mut Vec<u8>, v: serde_json::Value| {
        if !text.is_empty() {
            text.push(b',');
        }
        serde_json::to_writer(text, &v)
    };
    let mut texts = vec![Vec::new(); sample_columns.len() + models];
    while let Some(set) = next(handle, &mut pass)? {
        for i in 0..set.samples.len() {
            let (samples, outputs) = texts.split_at_mut(sample_columns.len());
            for ((_, value), text) in sample_columns.iter().zip(samples) {
                push(text, value(&set, i))?;
            }
            for (m, text) in outputs.iter_mut().enumerate() {
                push(text, num(set.outputs_at(i)[m]))?;
            }
        }
        if texts.iter().map(Vec::len).sum::<usize>() > ONE_PASS_BYTES {
            return Ok(None);
        }
    }
    Ok(Some(texts))
}

/// One pass: the values `value` picks from every sample, comma separated.
fn column(
    handle: &Handle,
    store: &Store,
    pages: &mut Option<SamplePages>,
    run: &Run,
    q: SampleQuery,
    sink: &Sink,
    value: impl Fn(&SampleSet, usize) -> serde_json::Value,
) -> anyhow::Result<()> {
    let mut pass = match pages.take() {
        Some(p) => p,
        None => handle.block_on(store.sample_pages(run.id, &q))?,
    };
    let mut first = true;
    while let Some(set) = next(handle, &mut pass)? {
        let mut out = Vec::new();
        for i in 0..set.samples.len() {
            if !first {
                out.push(b',');
            }
            first = false;
            serde_json::to_writer(&mut out, &value(&set, i))?;
        }
        sink.send(out)?;
    }
    Ok(())
}

fn num(v: f64) -> serde_json::Value {
    serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, serde_json::Value::Number)
}

/// Bytes the Parquet writer has produced and the sink not yet taken.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Shared {
    fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn parquet(handle: &Handle, mut pages: SamplePages, run: &Run, sink: &Sink) -> anyhow::Result<()> {
    let out = Shared::default();
    let mut w = super::parquet::PageWriter::new(out.clone(), run, pages.models())?;
    while let Some(set) = next(handle, &mut pages)? {
        w.page(&set)?;
        sink.send(out.take())?;
    }
    w.finish()?;
    sink.send(out.take())
}
