/// @file cancellation.hpp
/// Stopping long work early, from another thread or from a signal handler.
///
/// A stop request is process-wide: it asks every running colflow operation (a stream pass, a
/// conversion, an export, a simulation, an analysis) to stop at its next check, which comes
/// between columns and between blocks of work, so a request is honoured within one column's
/// time. The operation then throws colflow::error with errc::cancelled, and every output it
/// was writing is removed on the way out (staged_output.hpp), so nothing partial is left.
///
/// The library installs no signal handler: the program decides what a signal means. The
/// `colflow` command maps SIGINT, SIGTERM and SIGHUP to request_stop(); an embedding program or
/// the Python bindings call it their own way. request_stop() is async-signal-safe.
#pragma once

namespace colflow {

/// Asks the running operations to stop. Async-signal-safe; idempotent.
void request_stop() noexcept;

/// True after request_stop() until clear_stop_request().
bool stop_requested() noexcept;

/// Forgets a stop request, so that later operations run (e.g. after handling an interrupt
/// in an interactive session).
void clear_stop_request() noexcept;

/// Throws colflow::error(errc::cancelled, "stopped on request") when a stop was requested.
void throw_if_stop_requested();

}  // namespace colflow
