// How colflow._core calls into the library: errors raised as colflow._errors' classes, and long
// calls run off the calling thread with progress and Ctrl-C (python_call.hpp).
#include "python_call.hpp"

#include <chrono>
#include <string>
#include <thread>
#include <utility>

#include "bindings.hpp"
#include "colflow/cancellation.hpp"
#include "colflow/error.hpp"

namespace colflow::python {
namespace {

// Raises the Python class colflow._errors picks for the code, with the library's message
// (without std::system_error's category suffix) and the code's name as `kind`.
void raise_colflow_error(const error& e) {
  nb::object errors = nb::module_::import_("colflow._errors");
  const std::string kind(errc_name(e.kind()));
  nb::object cls = errors.attr("class_for")(kind);
  nb::object exc = cls(e.message());
  exc.attr("kind") = nb::str(kind.c_str());
  PyErr_SetObject(cls.ptr(), exc.ptr());
}

}  // namespace

void bind_errors(nb::module_&) {
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const error& e) {
      raise_colflow_error(e);
    }
  });
}

python_call::python_call(nb::object progress, std::set<std::string> passes)
    : progress_(std::move(progress)), passes_(std::move(passes)) {}

analysis_options python_call::options() {
  analysis_options o;
  if (progress_.is_none()) return o;
  o.progress = [this](const std::string& label, const pass_progress& p) {
    if (passes_.empty() || passes_.count(label))
      note(label, p.columns_done, p.columns_total, "columns");
  };
  o.on_step = [this](const std::string& label, const loop_progress& p) {
    note(label, p.done, p.total, label == "chain" ? "iterations" : "lambda values");
  };
  return o;
}

void python_call::note(const std::string& label, std::uint64_t done, std::uint64_t total,
                       const char* unit) {
  std::lock_guard lock(mutex_);
  label_ = label;
  unit_ = unit;
  done_ = done;
  total_ = total;
  fresh_ = true;
}

void python_call::run(int threads, const std::function<void()>& work) {
  std::exception_ptr failure;
  bool finished = false;
  std::thread worker([&] {
    try {
      in_arena(threads, work);
    } catch (...) {
      failure = std::current_exception();
    }
    std::lock_guard lock(mutex_);
    finished = true;
    ended_.notify_all();
  });
  const std::exception_ptr interrupted = wait_for(finished);
  {
    nb::gil_scoped_release unlocked;
    worker.join();
  }
  if (interrupted) {
    clear_stop_request();
    std::rethrow_exception(interrupted);
  }
  if (failure) std::rethrow_exception(failure);
}

// Waits for `finished` (set under mutex_ by the worker) 50 ms at a time with the GIL released,
// reporting progress and running Python's signal handlers in between. Returns the Python
// exception that cut the wait short, the library's stop already requested; null once the work
// has ended.
std::exception_ptr python_call::wait_for(const bool& finished) {
  for (bool over = false; !over;) {
    {
      nb::gil_scoped_release unlocked;
      std::unique_lock lock(mutex_);
      over = ended_.wait_for(lock, std::chrono::milliseconds(50), [&] { return finished; });
    }
    try {
      report();
      if (PyErr_CheckSignals() != 0) throw nb::python_error();
    } catch (...) {
      std::exception_ptr interrupted = std::current_exception();
      request_stop();
      return interrupted;
    }
  }
  return nullptr;
}

// Calls the progress callback with the latest report, if it is new (GIL held).
void python_call::report() {
  if (progress_.is_none()) return;
  std::string label, unit;
  std::uint64_t done = 0, total = 0;
  {
    std::lock_guard lock(mutex_);
    if (!fresh_) return;
    fresh_ = false;
    label = label_;
    unit = unit_;
    done = done_;
    total = total_;
  }
  progress_(label, done, total, unit);
}

}  // namespace colflow::python
