//! `fpcheck._native`: the Python module over the fpcheck library.
//!
//! Every function calls the same library code as the matching CLI command
//! and returns the object that command prints with `--json` (converted from
//! the same serde values). The GIL is released for all file and git work.
//! The stubs with the documentation are in `fpcheck/__init__.pyi`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use fpcheck::config::{self, Overrides, RuntimeSpec};
use fpcheck::gate::{ack as core_ack, document, lock, run, snapshot as core_snapshot, Cause};
use fpcheck::range::{self, RangeSpec};
use fpcheck::setting::Spelling;
use fpcheck::source::git::Session;
use fpcheck::{DirSource, GitSource, Revision, Source};

mod convert;
mod errors;
mod warm;
mod watch;

use convert::to_py;
use errors::{detached, Error};

/// The settings of a directory runtime: no config file (an installed
/// runtime has none), defaults replaced by what is given.
fn dir_spec(
    extensions: Option<Vec<String>>,
    exclude: Option<Vec<String>>,
) -> Result<RuntimeSpec, Error> {
    let overrides = Overrides::from_lists(None, None, extensions, exclude)?;
    Ok(config::resolve(None, &overrides)?)
}

#[pyfunction]
#[pyo3(signature = (root, *, extensions=None, exclude=None))]
fn fingerprint(
    py: Python<'_>,
    root: PathBuf,
    extensions: Option<Vec<String>>,
    exclude: Option<Vec<String>>,
) -> PyResult<String> {
    detached(py, move || {
        let rules = dir_spec(extensions, exclude)?.rules;
        let fp = fpcheck::compute(&DirSource::new(root), &rules)?;
        Ok(fp.as_gate_str().to_string())
    })
}

#[pyfunction]
#[pyo3(signature = (root, *, extensions=None, exclude=None))]
fn inspect<'py>(
    py: Python<'py>,
    root: PathBuf,
    extensions: Option<Vec<String>>,
    exclude: Option<Vec<String>>,
) -> PyResult<Bound<'py, PyAny>> {
    let value = detached(py, move || {
        let rules = dir_spec(extensions, exclude)?.rules;
        let fp = fpcheck::compute(&DirSource::new(root), &rules)?;
        Ok(serde_json::json!({
            "fingerprint": fp.digest,
            "files": fp.files(),
            "unavailable_reason": fp.unavailable_reason,
        }))
    })?;
    to_py(py, &value)
}

#[pyfunction]
#[pyo3(signature = (repo, rev="HEAD", *, root=None, extensions=None, exclude=None, runtime=None))]
fn fingerprint_at(
    py: Python<'_>,
    repo: PathBuf,
    rev: &str,
    root: Option<String>,
    extensions: Option<Vec<String>>,
    exclude: Option<Vec<String>>,
    runtime: Option<String>,
) -> PyResult<String> {
    let rev = rev.to_string();
    detached(py, move || {
        // One session per call: what it reads and keeps is this call's and
        // this repository's, whatever other threads analyse meanwhile.
        let repo = Session::open(Some(&repo)).map_err(Error::repository)?;
        fpcheck::range::check_revision(&rev).map_err(|e| Error::Revision(e.to_string()))?;
        let revision = Revision::parse(&repo, &rev).map_err(Error::revision)?;
        // As `fpcheck fingerprint REV`: the fpcheck.toml committed at that
        // revision (what its gate uses), the keywords over it.
        let overrides = Overrides::from_lists(runtime, root, extensions, exclude)?;
        let settings = config::SettingsRequest::of(None, true, overrides)?
            .at_revision(&repo, revision.tree, &rev)?
            .spec;
        let source = GitSource::new(repo, revision, &settings.root)?;
        let fp = fpcheck::compute(&source as &dyn Source, &settings.rules)?;
        Ok(fp.as_gate_str().to_string())
    })
}

/// The keyword settings of `analyse`.
#[derive(Default)]
struct AnalyseKeywords {
    root: Option<String>,
    extensions: Option<Vec<String>>,
    exclude: Option<Vec<String>>,
    config: Option<PathBuf>,
    /// The CLI's repeatable `--runtime`: none means every runtime.
    runtime: Vec<String>,
    worktree: bool,
    use_cache: bool,
    /// Classify runtime changes (layout / docstrings / code), as the CLI
    /// does unless `--no-classify`.
    classify: bool,
    /// When git's own checkout confirms a "no restart" (`--witness`).
    witness: fpcheck::witness::Mode,
}

impl AnalyseKeywords {
    fn from_kwargs(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let mut s = AnalyseKeywords {
            use_cache: true,
            classify: true,
            ..Default::default()
        };
        let Some(kwargs) = kwargs else { return Ok(s) };
        for (key, value) in kwargs.iter() {
            let key: String = key.extract()?;
            if value.is_none() {
                continue;
            }
            match key.as_str() {
                "root" => s.root = Some(value.extract()?),
                "extensions" => s.extensions = Some(value.extract()?),
                "exclude" => s.exclude = Some(value.extract()?),
                "config" => s.config = Some(value.extract()?),
                "runtime" => s.runtime = runtime_names(&value)?,
                "worktree" => s.worktree = value.extract()?,
                "use_cache" => s.use_cache = value.extract()?,
                "classify" => s.classify = value.extract()?,
                "witness" => s.witness = witness_mode(&value)?,
                other => {
                    return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                        "analyse() got an unexpected keyword argument '{other}' \
                         (known: root, extensions, exclude, config, runtime, worktree, use_cache, classify, witness)"
                    )))
                }
            }
        }
        Ok(s)
    }
}

/// `witness=`: `"auto"`, `"always"` or `"never"`, as `--witness`.
fn witness_mode(value: &Bound<'_, PyAny>) -> PyResult<fpcheck::witness::Mode> {
    let name: String = value.extract().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err("witness must be \"auto\", \"always\" or \"never\"")
    })?;
    fpcheck::witness::Mode::parse(&name).ok_or_else(|| {
        pyo3::exceptions::PyValueError::new_err(format!(
            "witness must be one of {}, not {name:?}",
            fpcheck::witness::Mode::NAMES.join(", ")
        ))
    })
}

/// `runtime=`: one name, or a list of names (the repeatable `--runtime`).
fn runtime_names(value: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if let Ok(one) = value.extract::<String>() {
        return Ok(vec![one]);
    }
    value.extract::<Vec<String>>().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(
            "runtime must be a runtime name (str) or a list of names",
        )
    })
}

#[pyfunction]
#[pyo3(signature = (repo, from_rev, to_rev="HEAD", **settings))]
fn analyse<'py>(
    py: Python<'py>,
    repo: PathBuf,
    from_rev: &str,
    to_rev: &str,
    settings: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let s = AnalyseKeywords::from_kwargs(settings)?;
    let (from_rev, to_rev) = (from_rev.to_string(), to_rev.to_string());
    let text = detached(py, move || {
        // One session per call: what it reads and keeps is this call's and
        // this repository's, whatever other threads analyse meanwhile.
        let repo = Session::open(Some(&repo)).map_err(Error::repository)?;
        // The runtimes are chosen by `analyse_runtimes`, as the CLI's.
        let overrides = Overrides::from_lists(None, s.root, s.extensions, s.exclude)?;
        // As the CLI: --config, else the fpcheck.toml committed at each end.
        let settings = config::SettingsRequest::of(s.config.as_deref(), true, overrides)?;
        // Resolved first, so an unknown revision is a RevisionError.
        Revision::parse(&repo, &from_rev).map_err(Error::revision)?;
        let to = if s.worktree {
            None
        } else {
            Revision::parse(&repo, &to_rev).map_err(Error::revision)?;
            Some(to_rev)
        };
        // The CLI's own call (`fpcheck FROM..TO`): one runtime, or the
        // `runtimes` array of a monorepo.
        let mut outcome = range::analyse_runtimes(
            &repo,
            &range::RangeOptions {
                persistent_cache: s.use_cache,
                witness: s.witness,
                ..range::RangeOptions::new(RangeSpec::between(from_rev, to), s.worktree, settings)
            },
            &s.runtime,
        )?;
        if s.classify {
            outcome.classify(&repo, s.use_cache);
        }
        // The CLI's `--format json` text, parsed back: the same object.
        fpcheck::report::Render::render(
            &outcome,
            &fpcheck::report::Format::Json,
            &fpcheck::report::RenderOptions::default(),
        )
        .map_err(|e| Error::Config(e.0))
    })?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| errors::FpcheckError::new_err(format!("internal: bad report JSON: {e}")))?;
    to_py(py, &value)
}

/// `cache=`: None, True (in-process watcher), or a path (watcher, and the
/// CLI's cache file behind it).
fn status_cache(cache: Option<&Bound<'_, PyAny>>) -> PyResult<warm::Cache> {
    let Some(cache) = cache.filter(|c| !c.is_none()) else {
        return Ok(warm::Cache::None);
    };
    if let Ok(flag) = cache.cast::<pyo3::types::PyBool>() {
        return Ok(if flag.is_true() {
            warm::Cache::Memory
        } else {
            warm::Cache::None
        });
    }
    if cache.is_instance_of::<PyString>() || cache.hasattr("__fspath__")? {
        return Ok(warm::Cache::File(cache.extract()?));
    }
    Err(pyo3::exceptions::PyTypeError::new_err(
        "cache must be None, True (in-process watcher) or a path (watcher and cache file)",
    ))
}

#[pyfunction]
#[pyo3(signature = (runtime_root, marker, *, process_fingerprint, process_version="", client="", cache=None, extensions=None, exclude=None, verify_interval=None))]
#[allow(clippy::too_many_arguments)]
fn status<'py>(
    py: Python<'py>,
    runtime_root: PathBuf,
    marker: PathBuf,
    process_fingerprint: &str,
    process_version: &str,
    client: &str,
    cache: Option<&Bound<'py, PyAny>>,
    extensions: Option<Vec<String>>,
    exclude: Option<Vec<String>>,
    verify_interval: Option<f64>,
) -> PyResult<Bound<'py, PyAny>> {
    let cache = status_cache(cache)?;
    // 0: every call is a full check.
    let verify_interval = seconds_arg(
        "verify_interval",
        verify_interval,
        warm::DEFAULT_VERIFY_INTERVAL,
    )?;
    let (process_fingerprint, process_version) =
        (process_fingerprint.to_string(), process_version.to_string());
    let client = (!client.is_empty()).then(|| client.to_string());
    let value = detached(py, move || {
        let question = warm::Question {
            root: runtime_root,
            marker,
            rules: dir_spec(extensions, exclude)?.rules,
            process_fingerprint,
            process_version,
            client,
            cache,
            verify_interval,
        };
        let report = warm::status(&question)?;
        Ok(document(&report))
    })?;
    to_py(py, &value)
}

#[pyfunction]
#[pyo3(signature = (runtime_root, *, out=None, extensions=None, exclude=None))]
fn snapshot<'py>(
    py: Python<'py>,
    runtime_root: PathBuf,
    out: Option<PathBuf>,
    extensions: Option<Vec<String>>,
    exclude: Option<Vec<String>>,
) -> PyResult<Bound<'py, PyAny>> {
    let value = detached(py, move || {
        let settings = core_snapshot::SnapshotSettings::from(dir_spec(extensions, exclude)?);
        let snap = core_snapshot::take(&runtime_root, &settings)?;
        if let Some(out) = &out {
            fpcheck::atomic::write_atomic(out, &snap.to_bytes()).map_err(|e| {
                Error::Write(format!(
                    "cannot write {}: {}",
                    out.display(),
                    fpcheck::gate::io_reason(&e)
                ))
            })?;
        }
        Ok(serde_json::to_value(&snap).expect("plain data serialises"))
    })?;
    to_py(py, &value)
}

/// The snapshot argument of `gate`: a file, or the dict `snapshot()`
/// returned (written to a private temporary file, so the gate reads and
/// checks it exactly as it reads `--before`).
enum Before {
    File(PathBuf),
    /// The dict as JSON text, and whether it holds a float JSON cannot
    /// (NaN, infinities: `json.dumps` writes them anyway, the gate then
    /// refuses the text).
    Json(Vec<u8>, bool),
}

fn before_arg(snapshot: &Bound<'_, PyAny>) -> PyResult<Before> {
    if snapshot.cast::<PyDict>().is_ok() {
        let json = snapshot.py().import("json")?;
        // Strict first: the usual dict is serialised once. Only one that
        // holds NaN or an infinity is serialised again, as `json.dumps`
        // writes it, for the gate to refuse with its own words.
        let strict = PyDict::new(snapshot.py());
        strict.set_item("allow_nan", false)?;
        let (text, nan) = match json.call_method("dumps", (snapshot,), Some(&strict)) {
            Ok(text) => (text.extract::<String>()?, false),
            Err(e) if e.is_instance_of::<pyo3::exceptions::PyValueError>(snapshot.py()) => {
                (json.call_method1("dumps", (snapshot,))?.extract()?, true)
            }
            Err(e) => return Err(e),
        };
        return Ok(Before::Json(text.into_bytes(), nan));
    }
    Ok(Before::File(snapshot.extract().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(
            "snapshot must be the dict fpcheck.snapshot() returned, or the path of a snapshot file",
        )
    })?))
}

#[pyfunction]
#[pyo3(signature = (snapshot, runtime_root, marker, *, client="", lock_timeout=None))]
fn gate<'py>(
    py: Python<'py>,
    snapshot: &Bound<'py, PyAny>,
    runtime_root: PathBuf,
    marker: PathBuf,
    client: &str,
    lock_timeout: Option<f64>,
) -> PyResult<Bound<'py, PyAny>> {
    let before = before_arg(snapshot)?;
    let clients: Vec<String> = if client.is_empty() {
        Vec::new()
    } else {
        vec![client.to_string()]
    };
    let timeout = timeout_arg(lock_timeout)?;
    let value = detached(py, move || {
        let _tmp;
        // The private file holding a dict: its name means nothing to the
        // caller, who passed a dict.
        let mut private: Option<(String, bool)> = None;
        let before_path = match before {
            Before::File(p) => p,
            Before::Json(bytes, nan) => {
                let mut f = tempfile::NamedTempFile::new().map_err(|e| {
                    Error::Snapshot(format!("cannot hold the snapshot in a temporary file: {e}"))
                })?;
                std::io::Write::write_all(&mut f, &bytes)
                    .map_err(|e| Error::Snapshot(format!("cannot write the snapshot: {e}")))?;
                let path = f.path().to_path_buf();
                private = Some((path.display().to_string(), nan));
                _tmp = f;
                path
            }
        };
        let no_hook = |_: &Path| Ok(());
        let mut report = run::gate(&run::GateRequest {
            dir: &runtime_root,
            before: &before_path,
            marker: &marker,
            clients: &clients,
            settings: None,
            lock_timeout: timeout,
            before_rename: &no_hook,
        });
        if let (Some((private, nan)), Some(error)) = (&private, report.error.as_mut()) {
            *error = error.replace(private.as_str(), "the snapshot argument (a dict)");
            // Only a snapshot error is the dict's fault: a lock timeout or
            // a marker that cannot be written must not blame it.
            if *nan && report.error_cause == Some(Cause::Snapshot) {
                error.push_str(": it holds a float NaN or infinity, which JSON cannot");
            }
        }
        let value = document(&report);
        // Failures are in the report, with the conservative answer (the
        // marker may have been written): raised, with the report attached.
        let failure = |m: String| match report.error_cause {
            Some(Cause::Settings | Cause::Client) => Error::Config(m),
            Some(Cause::Snapshot) => Error::Snapshot(m),
            Some(Cause::Lock) => Error::Lock(m),
            Some(Cause::Write) => Error::Write(m),
            Some(Cause::Marker) => Error::Marker(m),
            Some(Cause::Runtime) | None => Error::Unreadable(m),
        };
        match (&report.error, report.error_kind) {
            (Some(message), Some(_)) => Err(Error::Gate(Box::new(failure(message.clone())), value)),
            _ => Ok(value),
        }
    })?;
    to_py(py, &value)
}

fn timeout_arg(seconds: Option<f64>) -> PyResult<Duration> {
    seconds_arg("lock_timeout", seconds, lock::DEFAULT_TIMEOUT)
}

/// A keyword in seconds (>= 0), `default` when not given.
fn seconds_arg(keyword: &str, seconds: Option<f64>, default: Duration) -> PyResult<Duration> {
    match seconds {
        None => Ok(default),
        Some(s) => Duration::try_from_secs_f64(s).map_err(|_| {
            pyo3::exceptions::PyValueError::new_err(format!(
                "{keyword} must be a number of seconds >= 0, not {s}"
            ))
        }),
    }
}

#[pyfunction]
#[pyo3(signature = (marker, client, *, runtime_root, process_fingerprint, process_version="", lock_timeout=None, extensions=None, exclude=None))]
#[allow(clippy::too_many_arguments)]
fn ack<'py>(
    py: Python<'py>,
    marker: PathBuf,
    client: &str,
    runtime_root: PathBuf,
    process_fingerprint: &str,
    process_version: &str,
    lock_timeout: Option<f64>,
    extensions: Option<Vec<String>>,
    exclude: Option<Vec<String>>,
) -> PyResult<Bound<'py, PyAny>> {
    let (client, fp, version) = (
        client.to_string(),
        process_fingerprint.to_string(),
        process_version.to_string(),
    );
    let timeout = timeout_arg(lock_timeout)?;
    let value = detached(py, move || {
        let rules = dir_spec(extensions, exclude)?.rules;
        // The same library call as `fpcheck ack --dir ROOT`.
        let report = core_ack::run(&core_ack::AckRequest {
            marker: &marker,
            client: &client,
            process: core_ack::Process {
                fingerprint: Some(&fp),
                version: &version,
            },
            runtime: Some((&runtime_root, &rules)),
            lock_timeout: timeout,
        })?;
        // Its reason names settings as this package's keywords.
        Ok(document(&report.spelled(Spelling::Keyword)))
    })?;
    to_py(py, &value)
}

/// The `fpcheck` command: `args` without the program name; returns the
/// exit status. Output goes to the process's own stdout and stderr.
#[pyfunction]
fn cli_main(py: Python<'_>, args: Vec<OsString>) -> u8 {
    let argv: Vec<OsString> = std::iter::once(OsString::from("fpcheck"))
        .chain(args)
        .collect();
    py.detach(move || fpcheck::cli::run(argv))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    warm::install_fork_handler();
    m.add_function(wrap_pyfunction!(fingerprint, m)?)?;
    m.add_function(wrap_pyfunction!(inspect, m)?)?;
    m.add_function(wrap_pyfunction!(fingerprint_at, m)?)?;
    m.add_function(wrap_pyfunction!(analyse, m)?)?;
    m.add_function(wrap_pyfunction!(status, m)?)?;
    m.add_function(wrap_pyfunction!(snapshot, m)?)?;
    m.add_function(wrap_pyfunction!(gate, m)?)?;
    m.add_function(wrap_pyfunction!(ack, m)?)?;
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
