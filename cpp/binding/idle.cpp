// Aeron's own idle strategies (aeron_idle_strategy_load: "sleeping", "yield", "backoff",
// "noop", "spin"), callable from Python. `idle` sits in every duty-cycle loop, next to poll,
// so it is a raw fast-call method (fastcall.hpp): a pybind11 call plus a GIL hand-over cost
// more than a whole busy-spin idle. The GIL is released only around a call that may wait
// (work_count == 0 and a strategy that can yield, sleep or park): "spin" and "noop" never wait.
//
// One thread at a time: Aeron's back-off state is not thread-safe, and a waiting call runs
// without the GIL. While one thread waits in idle(), a call from another thread raises
// RuntimeError (an atomic flag, set before the GIL is released, cleared before it is taken
// back); calls that never release the GIL cannot overlap anything else.
#include "common.hpp"

#include "fastcall.hpp"

#include <climits>

extern "C" {
#include "aeron_agent.h"
#include "aeron_alloc.h"
}

namespace aeron_py {

namespace {

class IdleStrategy {
public:
    IdleStrategy(const std::string &name, const std::string &init_args) : name_(name) {
        func_ = aeron_idle_strategy_load(name.c_str(), &state_, nullptr, init_args.empty() ? nullptr : init_args.c_str());
        if (func_ == nullptr) throw_aeron_error("aeron_idle_strategy_load");
        may_wait_ = name != "spin" && name != "noop";
    }
    ~IdleStrategy() { aeron_free(state_); }
    IdleStrategy(const IdleStrategy &) = delete;
    IdleStrategy &operator=(const IdleStrategy &) = delete;

    // False with RuntimeError set when another thread is waiting in this strategy's idle. The
    // GIL comes back through ReleasedGil, which parks this thread for good if the interpreter
    // ended it meanwhile (gil.hpp).
    bool idle(int work_count) {
        const bool waits = work_count <= 0 && may_wait_;  // else: resets back-off state, or never waits
#ifndef Py_GIL_DISABLED
        if (!waits) {  // the GIL held throughout: no other thread is in func_ but a waiting one
            if (waiting_.load(std::memory_order_acquire)) return refuse();
            func_(state_, work_count);
            return true;
        }
#endif
        bool expected = false;
        if (!waiting_.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) return refuse();
        if (!waits) {  // free-threaded: the flag keeps other threads out instead of the GIL
            func_(state_, work_count);
            waiting_.store(false, std::memory_order_release);
            return true;
        }
        {
            ReleasedGil released;
            func_(state_, work_count);
            waiting_.store(false, std::memory_order_release);
        }
        return true;
    }

    const std::string &name() const { return name_; }
    bool waiting() const { return waiting_.load(std::memory_order_acquire); }

private:
    std::string name_;
    aeron_idle_strategy_func_t func_ = nullptr;
    void *state_ = nullptr;
    bool may_wait_ = true;
    // A thread is in func_ with the GIL released (free-threaded: any thread in func_). Needs no
    // Section: the rest of the object is immutable.
    std::atomic<bool> waiting_{false};

    bool refuse() const {
        PyErr_Format(PyExc_RuntimeError,
                     "IdleStrategy.idle: another thread is waiting in this %s strategy's idle (an idle strategy "
                     "belongs to one thread at a time: give each thread its own)",
                     name_.c_str());
        return false;
    }
};

// The strategy and the work count of an idle() call; nullptr with a Python error set.
IdleStrategy *parse_idle(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, int &work) {
    AERON_PY_FAST_BEGIN
    static const char *const names[] = {"work_count"};
    fast::FastArgs<1> parsed("idle", names);
    if (!parsed.parse(args, nargs, kwnames, 0)) return nullptr;
    long work_count;
    if (!parsed.get_long(0, 0, work_count)) return nullptr;
    work = static_cast<int>(work_count > INT_MAX ? INT_MAX : (work_count < INT_MIN ? INT_MIN : work_count));
    return fast::self_as<IdleStrategy>(self);
    AERON_PY_FAST_END
}

// IdleStrategy::idle throws nothing: it runs outside the fast-call guards.
PyObject *fast_idle(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    int work = 0;
    IdleStrategy *strategy = parse_idle(self, args, nargs, kwnames, work);
    if (strategy == nullptr || !strategy->idle(work)) return nullptr;
    Py_RETURN_NONE;
}

PyMethodDef idle_def = {
    "idle", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fast_idle)), METH_FASTCALL | METH_KEYWORDS,
    "idle($self, /, work_count=0)\n--\n\nThe loaded aeron_idle_strategy_func_t after a duty cycle that did "
    "`work_count` work (> 0 resets any back-off); the GIL is released while it may wait. One thread at a "
    "time: a call while another thread waits in it raises RuntimeError."};

}  // namespace

void init_idle(py::module_ &m) {
    py::class_<IdleStrategy> cls(m, "IdleStrategy", "An Aeron idle strategy (aeron_idle_strategy_load).");
    cls.def(py::init<const std::string &, const std::string &>(), py::arg("name"), py::arg("init_args") = "")
        .def_property_readonly("name", &IdleStrategy::name)
        .def_property_readonly("idling", &IdleStrategy::waiting,
                               "True while a thread waits in idle() with the GIL released.");
    fast::add_method(cls, &idle_def);
}

}  // namespace aeron_py
