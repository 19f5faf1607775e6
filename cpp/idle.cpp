// Aeron's own idle strategies (aeron_idle_strategy_load: "sleeping", "yield", "backoff",
// "noop", "spin"), callable from Python with the GIL released while idling.
#include "common.hpp"

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
    }
    ~IdleStrategy() { aeron_free(state_); }

    void idle(int work_count) {
        if (work_count > 0) {  // resets back-off state; never sleeps
            func_(state_, work_count);
            return;
        }
        py::gil_scoped_release release;
        func_(state_, work_count);
    }

    const std::string &name() const { return name_; }

private:
    std::string name_;
    aeron_idle_strategy_func_t func_ = nullptr;
    void *state_ = nullptr;
};

}  // namespace

void init_idle(py::module_ &m) {
    py::class_<IdleStrategy>(m, "IdleStrategy", "An Aeron idle strategy (aeron_idle_strategy_load).")
        .def(py::init<const std::string &, const std::string &>(), py::arg("name"), py::arg("init_args") = "")
        .def("idle", &IdleStrategy::idle, py::arg("work_count"),
             "Idle after a duty cycle that did `work_count` work (releases the GIL).")
        .def_property_readonly("name", &IdleStrategy::name);
}

}  // namespace aeron_py
